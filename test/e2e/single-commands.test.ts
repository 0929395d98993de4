import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The cases of a `describe.concurrent` run two at a time (more at once only share the CPU):
 * each has its own config, state and cache dirs, and its own account (or embedded sandbox), and
 * asserts nothing of another's. The cases that read a shared sandbox's totals stay one at a time.
 */
vi.setConfig({ maxConcurrency: 2 });

describe.concurrent('enrich contact / company / verify-email (--sandbox)', () => {
  it('prints a contact as key/value lines with remaining_credits', async () => {
    const r = await runCli(['contact', '--email', 'jane@acme.com', '--sandbox'], {
      env: await tempEnv(),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^email\s+jane@acme\.com$/m);
    expect(r.stdout).toMatch(/^remaining_credits\s+\d+$/m);
  });

  it('prints the raw response with --json', async () => {
    const r = await runCli(
      [
        'contact',
        '--first-name',
        'Jane',
        '--last-name',
        'Doe',
        '--company-domain',
        'acme.com',
        '--mobile',
        '--json',
        '--sandbox',
      ],
      { env: await tempEnv() },
    );
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as {
      contact: Record<string, unknown>;
      remaining_credits: number;
    };
    expect(body.contact).toHaveProperty('mobile_phone');
    expect(typeof body.remaining_credits).toBe('number');
  });

  it('prints every company match, then remaining_credits', async () => {
    const env = await tempEnv();
    const r = await runCli(['company', '--website', 'acme.com', '--top', '2', '--sandbox'], {
      env,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^match\s+1 of 2$/m);
    expect(r.stdout).toMatch(/^match\s+2 of 2$/m);
    expect(r.stdout).toMatch(/^remaining_credits\s+\d+$/m);
    const j = await runCli(['company', '--name', 'Acme', '--json', '--sandbox'], { env });
    expect((JSON.parse(j.stdout) as { companies: unknown[] }).companies).toHaveLength(1);
  });

  it('prints valid, invalid or unknown as the first word of verify-email', async () => {
    const r = await runCli(['verify-email', 'jane@acme.com', '--sandbox'], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(0);
    expect(r.stdout.split(/\s/)[0]).toMatch(/^(valid|invalid|unknown)$/);
    expect(r.stdout).toMatch(/^remaining_credits\s+\d+$/m);
  });

  it('verify-email reads an address pasted with spaces or a line break around it, as verify-emails reads a cell', async () => {
    const r = await runCli(['verify-email', ' jane@acme.com\n', '--sandbox', '--json'], {
      env: await tempEnv(),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { email: string }).email).toBe('jane@acme.com');
  });
});

describe('the one email rule in the single commands (--sandbox)', () => {
  it('refuses a bad --email before anything is sent, and verifies what mail systems take, CLI and sandbox alike', async () => {
    const env = await tempEnv();
    for (const bad of ['bad@@x.com', 'foo', 'mailto:a@b.com']) {
      const c = await runCli(['contact', '--email', bad, '--sandbox'], { env });
      expect([c.code, c.stdout]).toEqual([2, '']);
      expect(c.stderr).toMatch(/--email: not an email address/);
      const v = await runCli(['verify-email', bad, '--sandbox'], { env });
      expect([v.code, v.stdout]).toEqual([2, '']);
    }
    for (const good of ['a!b@example.com', 'josé@exämple.de', '"john doe"@example.com']) {
      const v = await runCli(['verify-email', good, '--sandbox'], { env });
      expect(v.stderr).toBe('');
      expect([v.code, v.stdout.split(/\s/)[0]]).toEqual([0, 'valid']);
    }
  });
});

describe.concurrent('running out of credits (exit 5), against a sandbox started here', () => {
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  /** The env of a CLI run as the holder of a new account with these credits. */
  async function envFor(account: {
    credits?: number;
    verification_credits?: number;
    suspended?: boolean;
  }): Promise<Record<string, string>> {
    const { suspended, ...credits } = account;
    const { account_id, api_key } = sandbox.admin.createAccount(credits);
    if (suspended) sandbox.admin.updateAccount(account_id, { suspended });
    return { ...(await tempEnv()), ENRICH_BASE_URL: sandbox.url, ENRICH_API_KEY: api_key };
  }

  it('verify-email: a 403 verification_credits_exhausted exits 5, not 4', async () => {
    const r = await runCli(['verify-email', 'a@b.com'], {
      env: await envFor({ verification_credits: 0 }),
    });
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /403 Forbidden: Verification credits exhausted.*\[CREDITS_EXHAUSTED\]/,
    );
    expect(r.code).toBe(5);
  });

  it('verify-email against a service that says it in-band (spec-only): the answer is printed, unknown first, and exit 5 (regression: nothing on stdout)', async () => {
    const spec = await startSandbox({ port: 0, host: '127.0.0.1', specOnly: true });
    try {
      const { api_key } = spec.admin.createAccount({ verification_credits: 0 });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: spec.url, ENRICH_API_KEY: api_key };
      const r = await runCli(['verify-email', 'a@b.com'], { env });
      expect(r.code).toBe(5);
      expect(r.stdout.split('\n')[0]).toBe('unknown');
      expect(r.stdout).toMatch(/^remaining_credits\s+0$/m);
      expect(r.stdout).toMatch(/^error\s+\S/m);
      expect(r.stderr).toMatch(/credits exhausted.*\[CREDITS_EXHAUSTED\]/);
      const j = await runCli(['verify-email', 'a@b.com', '--json'], { env });
      expect(j.code).toBe(5);
      expect(JSON.parse(j.stdout)).toMatchObject({
        remaining_credits: 0,
        error: expect.any(String),
      });
    } finally {
      await spec.close();
    }
  });

  it('a 403 for a suspended account still exits 4', async () => {
    const r = await runCli(['verify-email', 'a@b.com'], { env: await envFor({ suspended: true }) });
    expect(r.stderr).toMatch(/suspended.*\[AUTH_FORBIDDEN\]/);
    expect(r.code).toBe(4);
  });

  it('contact: an in-band credits error prints the record, says why on stderr and exits 5', async () => {
    const env = await envFor({ credits: 0 });
    const r = await runCli(['contact', '--email', 'zed@acme.com'], { env });
    expect(r.stdout).toMatch(/^error\s+Insufficient credits/m);
    expect(r.stdout).toMatch(/^remaining_credits\s+0$/m);
    expect(r.stderr).toMatch(
      /^enrich: contact not enriched: Insufficient credits.* \[CREDITS_EXHAUSTED\]$/m,
    );
    expect(r.code).toBe(5);

    const j = await runCli(['contact', '--email', 'zed@acme.com', '--json', '--quiet'], { env });
    const body = JSON.parse(j.stdout) as { contact: { error: string } };
    expect(body.contact.error).toMatch(/Insufficient credits/);
    expect(j.stderr).toMatch(/\[CREDITS_EXHAUSTED\]/);
    expect(j.code).toBe(5);
  });

  it('company: any match not enriched for credits exits 5, with or without --json', async () => {
    const env = await envFor({ credits: 0 });
    const r = await runCli(['company', '--website', 'acme.com'], { env });
    expect(r.stdout).toMatch(/^error\s+Insufficient credits/m);
    expect(r.stdout).toMatch(/^remaining_credits\s+0$/m);
    expect(r.stderr).toMatch(/company not enriched: Insufficient credits.*\[CREDITS_EXHAUSTED\]/);
    expect(r.code).toBe(5);

    const j = await runCli(['company', '--name', 'Acme', '--json'], { env });
    expect((JSON.parse(j.stdout) as { companies: unknown[] }).companies).toHaveLength(1);
    expect(j.stderr).toMatch(/\[CREDITS_EXHAUSTED\]/);
    expect(j.code).toBe(5);

    // One credit, three matches: the first is enriched, the other two are not.
    const partial = await runCli(['company', '--website', 'acme.com', '--top', '3'], {
      env: await envFor({ credits: 1 }),
    });
    expect(partial.stdout).toMatch(/^match\s+3 of 3$/m);
    expect(partial.stdout).toMatch(/^remaining_credits\s+0$/m);
    expect(partial.code).toBe(5);
  });

  it('a record not found is data: exit 0', async () => {
    const r = await runCli(['contact', '--email', 'nomatch@acme.com'], {
      env: await envFor({ credits: 10 }),
    });
    expect(r.stdout).toMatch(/^error\s+No match found$/m);
    expect(r.stderr).toBe('enrich: contact not enriched: No match found\n');
    expect(r.code).toBe(0);
  });
});

describe.concurrent('local validation, before any request', () => {
  // No key and no --sandbox: a request would fail with exit 4, so exit 2 proves none was tried.
  it.each([
    [
      ['contact', '--first-name', 'Jane', '--last-name', 'Doe'],
      /needs at least one of: --prof-network-url; --email; --first-name \+ --last-name \+ --company-domain/,
    ],
    [
      ['contact', '--email', 'a@acme.com', '--require-mobile'],
      /--require-mobile: .*mobile_phone_enrichment/,
    ],
    [
      ['contact', '--first-name', 'J'.repeat(256), '--last-name', 'D', '--company-name', 'A'],
      /--first-name: .*255/,
    ],
    [
      ['company', '--website', 'acme.com', '--top', '11'],
      /--top: expected an integer from 1 to 10, got "11"/,
    ],
    [['company'], /needs at least one of: --website; --name/],
    [['verify-email', 'not-an-email'], /<email>: /],
    [['contact', '--colour', 'red'], /unknown option '--colour'/],
    // A flag given twice is refused (regression: the last one was looked up, paid, no word).
    [
      ['contact', '--email', 'a@acme.com', '--email', 'b@acme.com'],
      /'--email <address>' argument 'b@acme\.com' is invalid\. given twice \(also "a@acme\.com"\)/,
    ],
    [['company', '--website', 'acme.com', '--top', '2', '--top', '3'], /--top <n>.*given twice/],
    // What a bulk run leaves out as no site is refused, not paid for (regression: sent, charged).
    [
      ['contact', '--first-name', 'A', '--last-name', 'B', '--company-domain', 'not a domain'],
      /--company-domain: not a domain name \(it contains a space\)/,
    ],
    [['company', '--website', 'n/a'], /--website: not a website \(it is not a web address/],
    [
      ['contact', '--prof-network-url', 'jane@acme.com'],
      /--prof-network-url: not a profile URL \(it is an email address\)/,
    ],
  ])('exits 2 for %j', async (args, message) => {
    const r = await runCli(args, { env: await tempEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('exits 4 without a key, naming auth login and --sandbox', async () => {
    const r = await runCli(['contact', '--email', 'jane@acme.com'], { env: await tempEnv() });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/no API key for profile "default" \[AUTH_MISSING\]/);
    expect(r.stderr).toMatch(/enrich auth login/);
    expect(r.stderr).toMatch(/--sandbox/);
  });

  it('exits 2 with a hint when a key is set but no base URL', async () => {
    const env = { ...(await tempEnv()), ENRICH_API_KEY: 'sk_test_0000000000000000' };
    const r = await runCli(['verify-email', 'jane@acme.com'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no service base URL configured/);
    expect(r.stderr).not.toContain('sk_test_0000000000000000');
  });

  it('has Examples in every --help', async () => {
    for (const cmd of [
      ['contact'],
      ['company'],
      ['verify-email'],
      ['auth', 'login'],
      ['auth', 'status'],
      ['auth', 'logout'],
      ['config'],
      ['config', 'set'],
    ]) {
      const r = await runCli([...cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Examples:\n {2}\$ enrich /);
    }
  });
});

describe('single lookups and the results cache, against a sandbox started here', () => {
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('answers a repeated contact, company and verify-email from the cache, charging once; --refresh and --no-cache ask again', async () => {
    const { account_id, api_key } = sandbox.admin.createAccount({
      credits: 100,
      verification_credits: 100,
    });
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: sandbox.url, ENRICH_API_KEY: api_key };
    const credits = () => sandbox.admin.getAccount(account_id)!;
    const first = await runCli(['contact', '--email', 'jane.doe@acme.com'], { env });
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(credits().credits).toBe(99);
    // The same lookup as a bulk run's dedupe sees it: spaces and case aside (regression:
    // `Jane.Doe@ACME.com` was paid for again).
    for (const email of [' jane.doe@acme.com ', 'Jane.Doe@ACME.com']) {
      const again = await runCli(['contact', '--email', email], { env });
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(first.stdout); // the same record, as the service gave it
      expect(again.stderr).toMatch(/answered from the results cache \(looked up 20\d\d-/);
    }
    expect(credits().credits).toBe(99);
    // Another account (key) never sees this account's answers.
    const other = sandbox.admin.createAccount({ credits: 5 });
    const foreign = { ...env, ENRICH_API_KEY: other.api_key };
    expect(
      (await runCli(['contact', '--email', 'jane.doe@acme.com'], { env: foreign })).stderr,
    ).toBe('');
    expect(sandbox.admin.getAccount(other.account_id)!.credits).toBe(4);
    for (const flag of ['--refresh', '--no-cache']) {
      const r = await runCli(['contact', '--email', 'jane.doe@acme.com', flag], { env });
      expect([r.code, r.stderr]).toEqual([0, '']);
    }
    expect(credits().credits).toBe(97);
    // --max-age 0s: too old at once.
    await runCli(['contact', '--email', 'jane.doe@acme.com', '--max-age', '0s'], { env });
    expect(credits().credits).toBe(96);

    await runCli(['company', '--website', 'acme.com', '--top', '2'], { env });
    const spent = credits().credits;
    for (const site of ['acme.com', 'https://www.ACME.com/']) {
      const co = await runCli(['company', '--website', site, '--top', '2'], { env });
      expect(co.stderr).toMatch(/results cache/);
    }
    expect(credits().credits).toBe(spent);
    // Another --top is another request.
    await runCli(['company', '--website', 'acme.com', '--top', '3'], { env });
    expect(credits().credits).toBeLessThan(spent);

    await runCli(['verify-email', 'jane.doe@acme.com'], { env });
    const v = await runCli(['verify-email', 'jane.doe@acme.com'], { env });
    expect(v.stdout.split('\n')[0]).toBe('valid');
    expect(v.stderr).toMatch(/results cache/);
    expect(credits().verification_credits).toBe(99);
  });
});

describe.each([{ specOnly: false }, { specOnly: true }])(
  'single lookups pay once, and only for a lookup that can be right (spec-only: $specOnly)',
  ({ specOnly }) => {
    let sandbox: SandboxHandle;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, host: '127.0.0.1', specOnly });
    });
    afterAll(async () => {
      await sandbox?.close();
    });

    it('charges once for a company asked without --top and with --top 1, in either order (regression: paid twice)', async () => {
      const { account_id, api_key } = sandbox.admin.createAccount({ credits: 100 });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sandbox.url, ENRICH_API_KEY: api_key };
      const credits = () => sandbox.admin.getAccount(account_id)!.credits;
      const plain = await runCli(['company', '--website', 'acme.com'], { env });
      expect([plain.code, plain.stderr]).toEqual([0, '']);
      expect(credits()).toBe(99);
      const one = await runCli(['company', '--website', 'acme.com', '--top', '1'], { env });
      expect(one.code).toBe(0);
      expect(one.stdout).toBe(plain.stdout);
      expect(one.stderr).toMatch(/answered from the results cache/);
      const other = await runCli(['company', '--name', 'Globex', '--top', '1'], { env });
      expect([other.code, other.stderr]).toEqual([0, '']);
      expect(credits()).toBe(98);
      const again = await runCli(['company', '--name', 'Globex'], { env });
      expect(again.stdout).toBe(other.stdout);
      expect(again.stderr).toMatch(/answered from the results cache/);
      // Two matches are another lookup.
      await runCli(['company', '--name', 'Globex', '--top', '2'], { env });
      expect(credits()).toBeLessThan(98);
      expect(credits()).toBe(100 - sandbox.admin.stats().credits_charged);
    });

    it('sends nothing for a --company-domain, --website or --prof-network-url that is no site, and still looks up a URL-shaped one (regression: charged)', async () => {
      const { account_id, api_key } = sandbox.admin.createAccount({ credits: 100 });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sandbox.url, ENRICH_API_KEY: api_key };
      const before = sandbox.admin.stats().requests_by_path;
      for (const args of [
        ['contact', '--first-name', 'Ann', '--last-name', 'Lee', '--company-domain', 'acme .com'],
        ['company', '--website', 'n/a'],
        ['contact', '--prof-network-url', 'not a url'],
      ]) {
        const r = await runCli(args, { env });
        expect([r.code, r.stdout]).toEqual([2, '']);
        expect(r.stderr).toMatch(/: not a (domain name|website|profile URL) \(/);
      }
      expect(sandbox.admin.stats().requests_by_path).toEqual(before);
      expect(sandbox.admin.getAccount(account_id)!.credits).toBe(100);
      const ok = await runCli(
        [
          'contact',
          '--first-name',
          'Ann',
          '--last-name',
          'Lee',
          '--company-domain',
          'https://www.acme.com/',
        ],
        { env },
      );
      expect([ok.code, ok.stderr]).toEqual([0, '']);
      expect(sandbox.admin.getAccount(account_id)!.credits).toBe(99);
    });
  },
);
