import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyEmailsFile } from '../../src/index.js';
import { clientForTest, sandboxForTest, tempDir } from './bulk-harness.js';

/**
 * A list with no rows (a nightly export with nothing new) is no error for `verify-emails`, as it
 * is for the bulk commands (README, *Supported inputs*): nothing is sent, so a file with no column
 * to look at (`[]`, an empty JSON Lines file) or a header naming none that holds emails gives an
 * empty output and exit 0, instead of failing cron with "no column holds email addresses".
 */
describe('verifyEmailsFile on an input without rows', () => {
  it.concurrent.for([
    ['an empty JSON array', 'list.json', '[]', 'verified.json', '[]'],
    ['an empty JSON Lines file', 'list.jsonl', '', 'verified.jsonl', ''],
    [
      'a header-only CSV with no email column',
      'list.csv',
      'Name,Company\n',
      'verified.csv',
      'Name,Company,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,verify_status,verify_credit_charged',
    ],
  ] as const)('%s: exit 0, an empty output, nothing sent', async ([, name, text, out, want], t) => {
    const s = await sandboxForTest(t);
    const client = clientForTest(t, { baseUrl: s.url, apiKey: s.apiKey });
    const dir = await tempDir('enrich-verify-norows-');
    const input = join(dir, name);
    await writeFile(input, text);
    const output = join(dir, out);
    const summary = await verifyEmailsFile({
      input,
      output,
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
    });
    expect(summary.exitCode).toBe(0);
    expect(summary.sent).toBe(0);
    expect((await readFile(output, 'utf8')).trim()).toBe(want);
    expect(s.admin.stats().requests_by_status).toEqual({});
  });

  it('an email column named for JSON without records is fine; one a known header lacks is not', async (t) => {
    const s = await sandboxForTest(t);
    const client = clientForTest(t, { baseUrl: s.url, apiKey: s.apiKey });
    const dir = await tempDir('enrich-verify-norows-');
    const common = {
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
    };
    await writeFile(join(dir, 'list.json'), '[]');
    const summary = await verifyEmailsFile({
      ...common,
      input: join(dir, 'list.json'),
      output: join(dir, 'out.json'),
      emailColumn: 'Email',
    });
    expect(summary.exitCode).toBe(0);
    await writeFile(join(dir, 'list.csv'), 'Name,Company\n');
    await expect(
      verifyEmailsFile({
        ...common,
        input: join(dir, 'list.csv'),
        output: join(dir, 'out.csv'),
        emailColumn: 'Work Email',
      }),
    ).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
  });
});
