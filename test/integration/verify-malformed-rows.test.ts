import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyEmailsFile } from '../../src/index.js';
import { clientForTest, sandboxForTest, tempDir } from './bulk-harness.js';

/**
 * Rows with too many or too few cells (a CRM export with a stray delimiter) are `invalid` and
 * never sent. The summary counted them as "no address" (though they hold one) and the dry run as
 * "not an address": two different words for the same rows, neither true. Both now count them as
 * malformed rows, and no other count takes them.
 */
describe('verifyEmailsFile with malformed rows', () => {
  it('counts them as malformed, in the run and in its dry run alike', async (t) => {
    const s = await sandboxForTest(t);
    const client = clientForTest(t, { baseUrl: s.url, apiKey: s.apiKey });
    const dir = await tempDir('enrich-verify-malformed-');
    const input = join(dir, 'list.csv');
    await writeFile(
      input,
      'Email,Name\nann@acme.com,Ann\nbob@acme.com,Bob,extra\ncid@acme.com\n,Dee\nnot-an-email,Eve\n',
    );
    const options = {
      input,
      output: join(dir, 'verified.csv'),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
    };
    const plan = await verifyEmailsFile({ ...options, dryRun: true });
    expect(plan).toMatchObject({ rows: 5, valid: 1, invalid: 1, empty: 1, malformed: 2 });
    const summary = await verifyEmailsFile(options);
    expect(summary).toMatchObject({
      rows: 5,
      notAnAddress: 1,
      noAddress: 1,
      malformed: 2,
      sent: 1,
      exitCode: 0,
    });
    expect(summary.statuses.invalid).toBe(4);
  });
});
