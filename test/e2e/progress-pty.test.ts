import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt } from '../api/harness.js';

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const fixture = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
/** Any SGR sequence (colour, bold…). */
const SGR = new RegExp(String.raw`\u001B\[[\d;]*m`);
/** The text of one frame of verify-emails' spinner (up to the next escape sequence or line end). */
const FRAME = new RegExp(String.raw`verifying: 25 rows, [^\r\n\u001B]*`, 'g');
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `enrich <args> -o <dir>/out.csv` (`enrich contacts <fixture>` by default) under a real
 * pseudo-terminal (util-linux `script`), 100 columns wide, against `sandbox`, and returns
 * everything the terminal was sent.
 */
async function onTerminal(
  sandbox: SandboxHandle,
  dir: string,
  env: Record<string, string>,
  args = ['contacts', fixture],
) {
  const out = join(dir, 'out.csv');
  const command = `stty cols 100 rows 30; exec ${[process.execPath, bin, ...args, '-o', out].map(quote).join(' ')}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      TERM: 'xterm-256color',
      ENRICH_BASE_URL: sandbox.url,
      ENRICH_API_KEY: sandbox.apiKey,
      ENRICH_CONFIG_DIR: join(dir, 'config'),
      ENRICH_STATE_DIR: join(dir, 'state'),
      ENRICH_CACHE_DIR: join(dir, 'cache'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const rows = (await readFile(out, 'utf8')).trimEnd().split('\n').length;
  return { code, screen, rows };
}

/** The elapsed times the spinner showed while the one job was still running. */
function clockWhileWaiting(screen: string): string[] {
  const seen = [
    ...screen.matchAll(/waiting for results: 25 rows, jobs 0\/1, credits 0, ([\d.]+m?s)/g),
  ];
  return [...new Set(seen.map((m) => m[1] ?? ''))];
}

describe('progress on a real terminal during a long job (pseudo-terminal, built CLI)', () => {
  let sandbox: SandboxHandle;
  let dir = '';
  beforeAll(async () => {
    await ensureBuilt();
    // Every job takes 3 s: the run waits with nothing new to report.
    sandbox = await startSandbox({ port: 0, jobMs: 3000 });
    dir = await mkdtemp(join(tmpdir(), 'enrich-pty-'));
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("ticks the spinner's clock while the job runs, in colour; NO_COLOR=1 draws it without any colour", async () => {
    const [coloured, plain] = await Promise.all([
      onTerminal(sandbox, join(dir, 'a'), {}),
      onTerminal(sandbox, join(dir, 'b'), { NO_COLOR: '1' }),
    ]);
    for (const r of [coloured, plain]) {
      expect(r.code, r.screen).toBe(0);
      expect(r.rows).toBe(26);
      // The clock moved on while the counters stood still: about every 200 ms over 3 s.
      expect(clockWhileWaiting(r.screen).length, r.screen).toBeGreaterThanOrEqual(5);
      expect(r.screen).toMatch(/rows: 25 {2}enriched: 23 /);
    }
    expect(coloured.screen).toMatch(SGR);
    expect(plain.screen).not.toMatch(SGR);
  });

  // Verification answers take 100 ms, two at a time: the fixture's 15 addresses take 0.8 s or more.
  it.each([
    ['in the main thread', {}],
    ['in a worker thread (as on Node 24: the terminal is passed in)', { ENRICH_WORKER: '1' }],
  ])(
    'verify-emails shows the spinner with its own counters, redrawn in place, %s',
    async (_where, env) => {
      const slow = await startSandbox({ port: 0, faults: { latency_ms: 100 } });
      try {
        const args = ['verify-emails', fixture, '--concurrency', '2'];
        const r = await onTerminal(slow, join(dir, `v${Object.keys(env).length}`), env, args);
        expect(r.code, r.screen).toBe(0);
        expect(r.rows).toBe(26);
        const frames = new Set(r.screen.match(FRAME));
        // Redrawn with new counters as the answers come, never printed as a plain line.
        expect(frames.size, r.screen).toBeGreaterThanOrEqual(2);
        expect(r.screen).not.toContain('enrich: verifying');
        expect(r.screen).toMatch(/addresses \d+\/\d+, sent \d+, credits \d+, /);
        expect(r.screen).toMatch(/rows: 25 {2}valid: /);
      } finally {
        await slow.close();
      }
    },
  );
});
