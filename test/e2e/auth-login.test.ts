import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv, type CliResult } from '../api/harness.js';

let sandbox: SandboxHandle;
const outputs: CliResult[] = [];
beforeAll(async () => {
  await ensureBuilt();
  sandbox = await startSandbox();
}, 120_000);
afterAll(() => sandbox?.close());

/** Runs the CLI and keeps its output for the final key scan. */
async function cli(args: string[], opts: Parameters<typeof runCli>[1] = {}) {
  const r = await runCli(args, opts);
  outputs.push(r);
  return r;
}

const mode = (p: string) => statSync(p).mode & 0o777;
const fixture = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));

describe('enrich auth', () => {
  it('logs in from piped stdin, checks the key, saves it 0600 in a 0700 dir', async () => {
    const env = await tempEnv();
    const r = await cli(['auth', 'login', '--base-url', sandbox.url, '--debug'], {
      env,
      input: `${sandbox.apiKey}\n`,
    });
    expect(r.code).toBe(0);
    const masked = `sk_sbx_…${sandbox.apiKey.slice(-4)}`;
    expect(r.stderr).toContain(`key ${masked} saved in`);
    expect(r.stderr).toMatch(/debug: GET \/contacts\/results\/[0-9a-f-]+\.json -> 404/);
    const file = `${env.ENRICH_CONFIG_DIR}/config.json`;
    expect(mode(file)).toBe(0o600);
    expect(mode(dirname(file))).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      profiles: { default: { base_url: sandbox.url, api_key: sandbox.apiKey } },
    });
    expect(sandbox.admin.stats().credits_charged).toBe(0);

    const status = await cli(['auth', 'status'], { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^key\\s+sk_sbx_…${sandbox.apiKey.slice(-4)}$`, 'm'));
    expect(status.stdout).toMatch(new RegExp(`^key_source\\s+file ${file}$`, 'm'));
    expect(status.stdout).toMatch(/^check\s+ok$/m);
    expect(status.stdout).toMatch(/^profile\s+default$/m);

    // A lookup records the remaining credits that status then shows.
    expect((await cli(['verify-email', 'jane@acme.com', '--debug'], { env })).code).toBe(0);
    const after = await cli(['auth', 'status', '--json'], { env });
    const json = JSON.parse(after.stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      check: 'ok',
      base_url: sandbox.url,
      remaining_verification_credits: 9999,
    });

    const out = await cli(['auth', 'logout'], { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/Logged out: key of profile "default" removed/);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      profiles: { default: { base_url: sandbox.url } },
    });
    const gone = await cli(['auth', 'status'], { env });
    expect(gone.code).toBe(4);
    expect(gone.stdout).toMatch(/^check\s+no key$/m);
  });

  it('refuses a wrong key without saving anything (exit 4)', async () => {
    const env = await tempEnv();
    const wrong = 'sk_sbx_thisKeyDoesNotExist0000000000000000';
    const r = await cli(['auth', 'login', '--base-url', sandbox.url], { env, input: wrong });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      `enrich: the service at ${sandbox.url} does not know this key (401 Unauthorized: `,
    );
    expect(r.stderr).toMatch(/; nothing was saved \[AUTH_INVALID\]\nhint: copy the key again/);
    // Not the free check's own request: a job id the user never asked for means nothing.
    expect(r.stderr).not.toMatch(/GET |results\//);
    expect(r.stderr).not.toContain(wrong);
    const status = await cli(['auth', 'status', '--base-url', sandbox.url], { env });
    expect(status.code).toBe(4);
  });

  it('refuses a base URL with a wrong path (every path 404s) instead of saving it (exit 2)', async () => {
    const env = await tempEnv();
    const wrongUrl = `${sandbox.url}/v1`;
    const r = await cli(['auth', 'login', '--base-url', wrongUrl], {
      env,
      input: `${sandbox.apiKey}\n`,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `enrich: ${wrongUrl} does not answer as the enrichment service: its results endpoint is not there and it checks no key (404); nothing was saved [API_NOT_FOUND]`,
    );
    expect(r.stderr).toMatch(/hint: the base URL is likely wrong/);
    expect(r.stderr).not.toContain('Logged in');
    expect(existsSync(`${env.ENRICH_CONFIG_DIR}/config.json`)).toBe(false);
    // The right URL with the same key still logs in: the probe's 401 means the service is there.
    const ok = await cli(['auth', 'login', '--base-url', sandbox.url], {
      env,
      input: `${sandbox.apiKey}\n`,
    });
    expect(ok.code).toBe(0);
    const status = await cli(['auth', 'status', '--base-url', wrongUrl, '--json'], { env });
    expect(status.code).toBe(2);
    expect(JSON.parse(status.stdout)).toMatchObject({ check: 'not-the-service' });
  });

  it('shows the balance the service reported only at that base URL, not at a wrong path on its origin (regression: …/v1 showed it)', async () => {
    const dirs = await tempEnv();
    const env = { ...dirs, ENRICH_API_KEY: sandbox.apiKey };
    const out = join(dirname(String(dirs.ENRICH_STATE_DIR)), 'out.csv');
    const wrongUrl = `${sandbox.url}/v1`;
    const lookup = await cli(['contact', '--email', 'jane@acme.com', '--base-url', sandbox.url], {
      env,
    });
    expect(lookup.code).toBe(0);
    const seen = Number(/^remaining_credits\s+(\d+)$/m.exec(lookup.stdout)?.[1]);
    expect(seen).toBeGreaterThan(0);
    for (const url of [sandbox.url, `${sandbox.url}/`]) {
      const right = await cli(['auth', 'status', '--base-url', url, '--json'], { env });
      expect(JSON.parse(right.stdout)).toMatchObject({ check: 'ok', remaining_credits: seen });
    }
    const wrong = await cli(['auth', 'status', '--base-url', wrongUrl, '--json'], { env });
    expect(wrong.code).toBe(2);
    expect(JSON.parse(wrong.stdout)).toMatchObject({
      check: 'not-the-service',
      remaining_credits: '',
      remaining_verification_credits: '',
      credits_seen_at: '',
    });
    // A run at that URL, which the service never answered, does not report it as its balance.
    const run = await cli(['contacts', fixture, '--base-url', wrongUrl, '-o', out, '--json'], {
      env,
    });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({
      stopped: { code: 'API_NOT_FOUND' },
      remaining_credits: null,
    });
    expect(run.stderr).not.toMatch(/remaining: \d/);
  });

  it('fails with a hint under --no-input when stdin holds no key', async () => {
    const env = await tempEnv();
    const r = await cli(['auth', 'login', '--base-url', sandbox.url, '--no-input'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/stdin held no key \(it was empty or blank\); nothing was saved/);
    expect(r.stderr).toMatch(/hint: .*enrich auth login < key\.txt/);
  });

  it.runIf(existsSync('/usr/bin/script'))(
    'Enter at the hidden prompt on a terminal: no key entered, exit 2, never "run it on a terminal"',
    async () => {
      const env = await tempEnv();
      // script(1) gives the command a pseudo-terminal: stdin is a TTY, as when a person types.
      const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
      const command = `${process.execPath} ${bin} auth login --base-url ${sandbox.url}; echo "rc=$?"`;
      const r = await new Promise<string>((resolve) => {
        const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
        });
        let out = '';
        let pressed = false;
        child.stdin.on('error', () => undefined); // script may be gone before its stdin ends
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (pressed || !/input hidden/.test(out)) return;
          pressed = true;
          child.stdin.write('\r');
        });
        child.on('close', () => resolve(out));
      });
      expect(r).toMatch(/no key was entered at the prompt; nothing was saved \[USAGE\]/);
      expect(r).toMatch(/hint: paste the key at the prompt and press Enter/);
      expect(r).not.toMatch(/on a terminal/);
      expect(r).toMatch(/rc=2/);
    },
  );

  it('reports ENRICH_API_KEY as the key source, masked', async () => {
    const env = {
      ...(await tempEnv()),
      ENRICH_API_KEY: sandbox.apiKey,
      ENRICH_BASE_URL: sandbox.url,
    };
    const r = await cli(['auth', 'status', '--json', '--debug'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      key_source: 'env ENRICH_API_KEY',
      key: `sk_sbx_…${sandbox.apiKey.slice(-4)}`,
      base_url_source: 'env',
      check: 'ok',
    });
    const c = await cli(['contact', '--email', 'jane@acme.com', '--json', '--debug'], { env });
    expect(c.code).toBe(0);
    expect(c.stderr).toMatch(/debug: POST \/contact -> 200 \(\d+ms, attempt 1\)/);
  });

  it('never prints the key: not on stdout, stderr or in --debug output', () => {
    expect(outputs.length).toBeGreaterThanOrEqual(10);
    for (const r of outputs) {
      expect(r.stdout).not.toContain(sandbox.apiKey);
      expect(r.stderr).not.toContain(sandbox.apiKey);
      // Nor a long slice of it (the masked form shows only the prefix and last 4).
      expect(r.stdout + r.stderr).not.toContain(sandbox.apiKey.slice(7, 20));
    }
  });
});
