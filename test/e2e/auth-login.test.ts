import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
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
    expect(r.stderr).toMatch(/401 Unauthorized.*\[AUTH_INVALID\]/);
    expect(r.stderr).toMatch(/nothing was saved/);
    expect(r.stderr).not.toContain(wrong);
    const status = await cli(['auth', 'status', '--base-url', sandbox.url], { env });
    expect(status.code).toBe(4);
  });

  it('fails with a hint under --no-input when stdin holds no key', async () => {
    const env = await tempEnv();
    const r = await cli(['auth', 'login', '--base-url', sandbox.url, '--no-input'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/expected an API key, got nothing/);
    expect(r.stderr).toMatch(/hint: .*enrich auth login < key\.txt/);
  });

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
