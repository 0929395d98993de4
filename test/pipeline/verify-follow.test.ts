import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyEmailsFile } from '../../src/bulk/verify-emails.js';
import { AHEAD_ROWS } from '../../src/pipeline/verify/run-verify.js';
import type { VerifyAnswer } from '../../src/pipeline/verify/types.js';
import { parseCsv, tempDir, writeCsv } from '../integration/bulk-harness.js';

// Rows are written as soon as the rows before them are settled (so a reader of stdout that
// goes away is seen early); one slow answer at the head holds the output up, and the
// requests behind it go on only up to AHEAD_ROWS rows past the output.
describe('verify-emails: the output follows the answers', () => {
  it('a stalled first address lets at most AHEAD_ROWS more be sent; once answered, every row is written', async () => {
    const n = AHEAD_ROWS * 3;
    const dir = await tempDir('enrich-verify-follow-');
    const rows = Array.from({ length: n }, (_, i) => [`${i}`, `lead${i}@firm${i % 13}.com`]);
    const input = await writeCsv(dir, 'list.csv', ['Id', 'Email'], rows);
    let calls = 0;
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    let sentWhileStalled = 0;
    const verify = async (email: string): Promise<VerifyAnswer> => {
      calls++;
      if (email === 'lead0@firm0.com') {
        // Released once the run sent far past the window (the bug) or after a while.
        const timer = setTimeout(release, 1000);
        await stalled;
        clearTimeout(timer);
        sentWhileStalled = calls;
      } else if (calls > AHEAD_ROWS * 2) release();
      return { email, status: 'valid', credit_charged: true, remaining_credits: 1e6 - calls };
    };
    const output = join(dir, 'out.csv');
    const summary = await verifyEmailsFile({
      input,
      output,
      service: { api: { verify }, baseUrl: 'http://127.0.0.1:9' },
      runsDir: join(dir, 'runs'),
      cache: false,
      concurrency: 4,
    });
    expect(sentWhileStalled).toBeLessThanOrEqual(AHEAD_ROWS + 4 + 1);
    expect(summary).toMatchObject({ exitCode: 0, sent: n, rows: n });
    const out = parseCsv(await readFile(output, 'utf8')).slice(1);
    expect(out.map((r) => r[0])).toEqual(rows.map((r) => r[0]));
    expect(out.every((r) => r[6] === 'valid')).toBe(true);
  });
});
