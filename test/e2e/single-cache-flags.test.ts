import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The single lookups take the bulk commands' cache flags "with the same meaning" (README,
 * *Results cache*), so they refuse what those refuse, before a key is looked for or anything
 * is sent: `--refresh` with `--no-cache` (a bulk run says "choose one"; a lookup used to pay
 * and keep nothing without a word), and a `--max-age` that is no duration (it used to be
 * checked only after the key, so a user without one was told to log in first).
 */
describe('enrich contact / company / verify-email cache flags', () => {
  const lookups = [
    ['contact', '--email', 'jane@acme.com'],
    ['company', '--name', 'Acme'],
    ['verify-email', 'jane@acme.com'],
  ];

  it.concurrent.for(lookups)('%s: --refresh with --no-cache is a usage error', async (args) => {
    // The embedded sandbox: the command would have been sent and charged.
    const r = await runCli([...args, '--refresh', '--no-cache', '--sandbox'], {
      env: await tempEnv(),
    });
    expect(r.stderr).toMatch(/--refresh and --no-cache: choose one \[USAGE\]/);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
  });

  it.concurrent.for(lookups)('%s: a bad --max-age is a usage error without a key', async (args) => {
    const r = await runCli([...args, '--max-age', 'banana'], { env: await tempEnv() });
    expect(r.stderr).toMatch(/--max-age: expected a duration/);
    expect(r.stderr).not.toMatch(/AUTH_MISSING/);
    expect(r.code).toBe(2);
  });
});
