import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openInput,
  verifyEmailsFile,
  type EnrichClient,
  type VerifyProgress,
} from '../../src/index.js';
import { PROGRESS_EVERY_ROWS } from '../../src/pipeline/verify/progress.js';
import { fastClient, sandboxPerTest, tempDir, writeCsv } from './bulk-harness.js';

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** `n` rows; every 4th repeats the address before it, every 9th holds none. */
function rows(n: number): string[][] {
  return Array.from({ length: n }, (_, i) => {
    const email = i % 9 === 8 ? '' : `lead${i % 4 === 3 ? i - 1 : i}@firm${i % 7}.com`;
    return [`R${i}`, email];
  });
}

/** Runs verifyEmailsFile over `n` rows read through an input whose passes are counted. */
async function run(n: number, listen: boolean) {
  const s = await sandbox();
  const client = fastClient(s);
  clients.push(client);
  const dir = await tempDir('enrich-verify-progress-');
  const source = await openInput(await writeCsv(dir, 'list.csv', ['Id', 'Email'], rows(n)));
  let passes = 0;
  const counted = {
    ...source,
    rows: () => {
      passes++;
      return source.rows();
    },
  };
  const reports: VerifyProgress[] = [];
  try {
    const summary = await verifyEmailsFile({
      input: counted,
      output: join(dir, 'out.csv'),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cache: false,
      concurrency: 4,
      ...(listen ? { onProgress: (p: VerifyProgress) => void reports.push(p) } : {}),
    });
    return { summary, reports, passes, sandbox: s };
  } finally {
    await source.close();
  }
}

describe('verifyEmailsFile: progress reports', () => {
  it('reports after each answer, with the rows counted beside the run; the last report is the whole run', async () => {
    const n = 1_300;
    const { summary, reports } = await run(n, true);
    expect(summary.exitCode).toBe(0);
    // One report per answer at least, and the rows' total once a pass beside the run counted them.
    expect(reports.length).toBeGreaterThanOrEqual(summary.sent);
    const counted = reports.findIndex((r) => r.rowsTotal !== undefined);
    expect(counted).toBeGreaterThanOrEqual(0);
    // Counting is a quick parse: done long before the last answer.
    expect(counted).toBeLessThan(reports.length / 2);
    expect(reports.slice(counted).every((r) => r.rowsTotal === n)).toBe(true);
    // Counters never go back.
    for (const key of ['rowsRead', 'rowsWritten', 'done', 'sent', 'creditsCharged'] as const)
      for (let i = 1; i < reports.length; i++)
        expect(reports[i]![key]).toBeGreaterThanOrEqual(reports[i - 1]![key]);
    for (const r of reports) expect(r.done).toBeLessThanOrEqual(r.addresses);
    expect(reports.at(-1)).toEqual({
      rowsRead: n,
      rowsWritten: n,
      rowsTotal: n,
      addresses: summary.addresses,
      done: summary.addresses,
      sent: summary.sent,
      creditsCharged: summary.creditsCharged,
    });
  });

  it('reports every few hundred rows read when nothing is sent (no address in the rows)', async () => {
    const s = await sandbox();
    const client = fastClient(s);
    clients.push(client);
    const dir = await tempDir('enrich-verify-progress-');
    const none = Array.from({ length: 2_000 }, (_, i) => [`R${i}`, '']);
    const reports: VerifyProgress[] = [];
    const summary = await verifyEmailsFile({
      input: await writeCsv(dir, 'empty.csv', ['Id', 'Email'], none),
      output: join(dir, 'out.csv'),
      emailColumn: 'Email',
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cache: false,
      onProgress: (p) => void reports.push(p),
    });
    expect(summary.sent).toBe(0);
    const reads = reports.map((r) => r.rowsRead);
    for (let at = PROGRESS_EVERY_ROWS; at <= 2_000; at += PROGRESS_EVERY_ROWS)
      expect(reads).toContain(at);
    expect(reports.at(-1)).toMatchObject({ rowsRead: 2_000, rowsWritten: 2_000, sent: 0 });
  });

  it('counts the rows in one more pass over the input, and not for a caller that does not listen', async () => {
    const [quiet, listened] = [await run(200, false), await run(200, true)];
    expect([quiet.summary.exitCode, listened.summary.exitCode]).toEqual([0, 0]);
    expect(listened.passes).toBe(quiet.passes + 1);
    expect(quiet.reports).toEqual([]);
  });
});
