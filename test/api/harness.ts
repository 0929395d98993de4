/** Shared test set-up: a fake clock whose sleep advances time, and a sandbox with a client. */
import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { createClient, type ClientOptions, type EnrichClient } from '../../src/api/client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { SandboxHandle, SandboxOptions } from '../../src/sandbox/index.js';
import type { IdempotencyStore } from '../../src/api/idempotency.js';
import { ApiError } from '../../src/errors.js';

/** Runs `fn` and returns the ApiError it throws (anything else is rethrown). */
export async function failure(fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

/** A clock that only moves when the code under test sleeps. */
export function fakeTime(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    sleeps,
  };
}

export interface Rig {
  sandbox: SandboxHandle;
  client: EnrichClient;
  time: ReturnType<typeof fakeTime>;
  debug: string[];
  /** Builds another client on the same sandbox and clock. */
  makeClient(over?: Partial<ClientOptions>): EnrichClient;
  close(): Promise<void>;
}

/** Starts a sandbox sharing a fake clock with a client that never really sleeps. */
export async function startRig(
  sandboxOptions: SandboxOptions = {},
  clientOptions: Partial<ClientOptions> = {},
): Promise<Rig> {
  const time = fakeTime();
  const sandbox = await startSandbox({ now: time.clock.now, ...sandboxOptions });
  const debug: string[] = [];
  const clients: EnrichClient[] = [];
  const makeClient = (over: Partial<ClientOptions> = {}) => {
    const c = createClient({
      baseUrl: sandbox.url,
      apiKey: sandbox.apiKey,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0.5,
      debug: (line) => debug.push(line),
      retry: { baseMs: 100 },
      ...clientOptions,
      ...over,
    });
    clients.push(c);
    return c;
  };
  const client = makeClient();
  return {
    sandbox,
    client,
    time,
    debug,
    makeClient,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sandbox.close();
    },
  };
}

/** What one CLI run printed, and how it ended. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns `bin/enrich.js` (built dist/) asynchronously, so a sandbox in this process
 * keeps answering. Only PATH and HOME are inherited; `env` adds the rest. The child is the
 * caller's (to signal it, or close its stdout); `out` gathers what it prints, `code` is how it
 * ended.
 */
export async function spawnCli(
  args: string[],
  opts: { env?: Record<string, string>; input?: string } = {},
) {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
  // stdout and stderr are pipes whatever stdin is (the options' union loses that).
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      // Never the real OS cache directory: this test file's own (setup-cache-dir.ts).
      ENRICH_CACHE_DIR: process.env.ENRICH_CACHE_DIR ?? '',
      ...opts.env,
    },
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  const code = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, out, code };
}

/** `spawnCli`, waited for: what the run printed and its exit code. */
export async function runCli(
  args: string[],
  opts: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const { out, code } = await spawnCli(args, opts);
  return { code: await code, ...out };
}

/** A fresh config and state directory pair for one test. */
export async function tempEnv(): Promise<Record<string, string>> {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const root = mkdtempSync(join(tmpdir(), 'enrich-e2e-'));
  return {
    ENRICH_CONFIG_DIR: join(root, 'config'),
    ENRICH_STATE_DIR: join(root, 'state'),
    ENRICH_CACHE_DIR: join(root, 'cache'),
  };
}

/** Builds dist/ when any source is newer than it (type errors elsewhere do not stop the emit). */
export async function ensureBuilt(): Promise<void> {
  const { readdirSync, statSync, existsSync } = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const out = `${root}dist/cli/main.js`;
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const p = `${dir}/${e.name}`;
      return Math.max(m, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }, 0);
  if (existsSync(out) && statSync(out).mtimeMs >= newest(`${root}src`)) return;
  spawnSync(
    process.execPath,
    [`${root}node_modules/typescript/bin/tsc`, '-p', `${root}tsconfig.build.json`],
    {
      stdio: 'ignore',
    },
  );
  if (!existsSync(out)) throw new Error('build failed: dist/cli/main.js is missing');
}

/**
 * An Idempotency-Key store that knows the service honours the key: the default sandbox
 * de-duplicates repeated submissions. Tests that compare a run through lost answers with a
 * clean run give it to their client, as a client that has seen the sandbox echo the key
 * would know; without it a lost submission is, rightly, UNCONFIRMED and not sent again.
 */
export function sandboxHonoursKeys(): IdempotencyStore {
  return { get: () => true, set: () => {} };
}
