import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli } from '../api/harness.js';

let sb: SandboxHandle;
let env: Record<string, string>;
beforeAll(async () => {
  await ensureBuilt();
  sb = await startSandbox({ port: 0, credits: 100, verificationCredits: 10 });
  env = { ENRICH_SANDBOX_URL: sb.url, ENRICH_SANDBOX_ADMIN_TOKEN: sb.adminToken };
}, 120_000);
afterAll(() => sb?.close());

interface Account {
  account_id: string;
  credits: number;
  verification_credits: number;
  suspended: boolean;
}

describe('enrich sandbox credits / accounts (e2e, against a running sandbox)', () => {
  it('credits add and set change the first account (the one whose key the sandbox printed) by default', async () => {
    const add = await runCli(['sandbox', 'credits', 'add', '250'], { env });
    expect(add.code).toBe(0);
    expect(add.stderr).toContain(`${sb.accountId}: credits 100 -> 350`);
    expect(sb.admin.getAccount(sb.accountId)?.credits).toBe(350);
    const set = await runCli(['sandbox', 'credits', 'set', '7', '--json'], { env });
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ account_id: sb.accountId, credits: 7 });
    const verification = await runCli(['sandbox', 'credits', 'add', '5', '--verification'], {
      env,
    });
    expect(verification.code).toBe(0);
    expect(sb.admin.getAccount(sb.accountId)).toMatchObject({
      credits: 7,
      verification_credits: 15,
    });
  });

  it('accounts create prints a working key once; accounts list shows every account, the first first', async () => {
    const created = await runCli(['sandbox', 'accounts', 'create', '--credits', '40', '--json'], {
      env,
    });
    expect(created.code).toBe(0);
    const acc = JSON.parse(created.stdout) as { account_id: string; api_key: string };
    expect(acc.api_key).toMatch(/^sk_sbx_/);
    const list = await runCli(['sandbox', 'accounts', 'list', '--json'], { env });
    const accounts = JSON.parse(list.stdout) as Account[];
    expect(accounts[0]?.account_id).toBe(sb.accountId);
    expect(accounts.find((a) => a.account_id === acc.account_id)).toMatchObject({
      credits: 40,
      suspended: false,
    });
    const table = await runCli(['sandbox', 'accounts', 'list'], { env });
    expect(table.stdout.split('\n')[0]).toMatch(/^ACCOUNT\s+CREDITS\s+VERIFICATION\s+STATUS$/);
    // --account picks another account; the first is left alone.
    const before = sb.admin.getAccount(sb.accountId)?.credits;
    const add = await runCli(['sandbox', 'credits', 'add', '2', '--account', acc.account_id], {
      env,
    });
    expect(add.code).toBe(0);
    expect(sb.admin.getAccount(acc.account_id)?.credits).toBe(42);
    expect(sb.admin.getAccount(sb.accountId)?.credits).toBe(before);
  });

  it('refuses a count that is not a whole number (exit 2) and an unknown account', async () => {
    const bad = await runCli(['sandbox', 'credits', 'add', '-3'], { env });
    expect(bad.code).toBe(2);
    const word = await runCli(['sandbox', 'credits', 'set', 'lots'], { env });
    expect(word.code).toBe(2);
    expect(word.stderr).toMatch(/credits set: expected a whole number of credits >= 0, got "lots"/);
    const unknown = await runCli(['sandbox', 'credits', 'set', '1', '--account', 'acc_nope'], {
      env,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/404 Account acc_nope not found/);
  });
});

describe('which sandbox the admin commands talk to', () => {
  let other: SandboxHandle;
  beforeAll(async () => {
    other = await startSandbox({ port: 0 });
  });
  afterAll(() => other?.close());

  /** The account ids `enrich ...args` lists, or its exit code when it fails. */
  const accountsOf = async (args: string[], env: Record<string, string>) => {
    const r = await runCli([...args, '--json'], { env });
    if (r.code !== 0) return r.code;
    const listed = JSON.parse(r.stdout) as { account_id: string }[];
    return [...new Set(listed.map((a) => a.account_id))];
  };

  it('enrich sandbox refuses a port out of range and a number past what it can count (exit 2, regression: an internal error)', async () => {
    const port = await runCli(['sandbox', '--port', '99999']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port: expected a port from 0 to 65535, got "99999"');
    expect(port.stderr).not.toContain('internal error');
    const credits = await runCli(['sandbox', '--port', '0', '--credits', '99999999999999999999']);
    expect(credits.code).toBe(2);
    expect(credits.stderr).toContain(
      '--credits: expected a whole number >= 0, got "99999999999999999999"',
    );
  });

  it('keys list, accounts list and credits honour the global --base-url (regression: ignored)', async () => {
    // ENRICH_SANDBOX_URL names the other sandbox; --base-url, a flag, wins over it.
    const env = {
      ENRICH_SANDBOX_URL: other.url,
      ENRICH_SANDBOX_ADMIN_TOKEN: sb.adminToken,
    };
    expect(await accountsOf(['--base-url', sb.url, 'sandbox', 'keys', 'list'], env)).toContain(
      sb.accountId,
    );
    expect(await accountsOf(['sandbox', 'accounts', 'list', '--base-url', sb.url], env)).toContain(
      sb.accountId,
    );
    const before = sb.admin.getAccount(sb.accountId)?.credits ?? 0;
    const add = await runCli(['sandbox', 'credits', 'add', '3', '--base-url', sb.url], { env });
    expect(add.code).toBe(0);
    expect(sb.admin.getAccount(sb.accountId)?.credits).toBe(before + 3);
    // Without --base-url, ENRICH_SANDBOX_URL is used: the other sandbox refuses this token.
    expect(await accountsOf(['sandbox', 'keys', 'list'], env)).toBe(4);
  });

  it('--url wins over --base-url; ENRICH_BASE_URL is never read', async () => {
    const token = { ENRICH_SANDBOX_ADMIN_TOKEN: other.adminToken };
    expect(
      await accountsOf(
        ['sandbox', 'keys', 'list', '--url', other.url, '--base-url', sb.url],
        token,
      ),
    ).toEqual([other.accountId]);
    // ENRICH_BASE_URL names the service runs use: the admin commands go by ENRICH_SANDBOX_URL.
    expect(
      await accountsOf(['sandbox', 'keys', 'list'], {
        ...token,
        ENRICH_BASE_URL: sb.url,
        ENRICH_SANDBOX_URL: other.url,
      }),
    ).toEqual([other.accountId]);
  });

  it('a --base-url that is not an http(s) URL is a usage error (exit 2), nothing sent', async () => {
    const r = await runCli(['sandbox', 'keys', 'list', '--base-url', 'ftp://127.0.0.1:1'], {
      env: { ENRICH_SANDBOX_URL: other.url, ENRICH_SANDBOX_ADMIN_TOKEN: sb.adminToken },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('base URL: expected http:// or https://');
  });
});
