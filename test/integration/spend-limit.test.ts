import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import { EnrichError } from '../../src/errors.js';
import { openInput } from '../../src/io/read.js';
import { planBulk } from '../../src/pipeline/run/plan.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import {
  CONTACT_HEADER,
  contactRows,
  fastClient,
  parseCsv,
  runFile,
  SANDBOX_MODES,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

// `--max-credits` against the sandbox in both modes (issue 21: mutants of the budget that no
// test saw). Each test names what a wrong budget would have spent.

const sandbox = sandboxPerTest();

const statusesOf = (csv: string) => {
  const rows = parseCsv(csv);
  const at = (rows[0] as string[]).indexOf('enrich_status');
  return rows.slice(1).map((r) => r[at]);
};

describe('--max-credits', () => {
  it.each(SANDBOX_MODES)(
    'companies with --top 3 --max-credits 10 send 3 rows (9 credits at most), not 20 ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const rows = Array.from({ length: 20 }, (_, i) => [`Company ${i}`, `company${i}.com`]);
      const file = await writeCsv(dir, 'co.csv', ['Company', 'Website'], rows);
      const { summary, output } = await runFile(s, file, {
        kind: 'companies',
        runsDir: dir,
        metadata: { top_matches_returned: 3 },
        maxCredits: 10,
        batchSize: 5,
        concurrency: 1,
      });
      expect(s.admin.stats().records_submitted).toBe(3);
      expect(s.admin.stats().credits_charged).toBeLessThanOrEqual(9);
      expect(statusesOf(output).slice(3)).toEqual(Array(17).fill('failed'));
      expect(summary.exitCode).toBe(5);
    },
  );

  it.each(SANDBOX_MODES)(
    'contacts: exactly --max-credits rows are sent, the next not ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(30));
      const { summary } = await runFile(s, file, { runsDir: dir, maxCredits: 7, batchSize: 4 });
      expect(s.admin.stats().records_submitted).toBe(7);
      expect(summary.statuses).toMatchObject({ enriched: 7, failed: 23 });
      expect(summary.exitCode).toBe(5);
    },
  );

  it.each(SANDBOX_MODES)(
    'a batch an earlier run journaled but the service never accepted is not sent when it does not fit: under --max-credits 50 a 100-row batch costs 0, not 100 ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(100));
      const o = { runsDir: dir, batchSize: 100, concurrency: 1 };
      const down: BulkApi = {
        ...toBulkApi(fastClient(s)),
        submit: () => Promise.reject(new EnrichError('NETWORK', 'connection refused')),
      };
      // The batch is journaled, then its POST fails before reaching the service.
      expect((await runFile(s, file, { ...o, api: down })).summary.exitCode).toBe(6);
      const second = await runFile(s, file, { ...o, maxCredits: 50 });
      expect(s.admin.stats().credits_charged).toBe(0);
      expect(s.admin.stats().records_submitted).toBe(0);
      expect(second.summary.statuses).toMatchObject({ failed: 100 });
      expect(second.summary.exitCode).toBe(5);
      // With room for it, the same batch goes, whole.
      const third = await runFile(s, file, { ...o, maxCredits: 100 });
      expect(s.admin.stats().records_submitted).toBe(100);
      expect(third.summary.exitCode).toBe(0);
    },
  );

  it('the dry run under --max-credits plans what the run then does: rows sent, rows left failed, jobs, credits', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    // 30 rows, every 4th a duplicate of the row before: 23 distinct requests.
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(30, { dupEvery: 4 }));
    const o = { maxCredits: 7, batchSize: 4 };
    const source = await openInput(file);
    const plan = await resolveRun({ kind: 'contacts', output: '-', ...o }, source)
      .then((run) => planBulk(run))
      .finally(() => source.close());
    // 7 rows sent; the other 16 distinct rows and the 5 duplicates of those end "failed".
    expect([plan.sent, plan.over_budget, plan.batches, plan.max_credits]).toEqual([7, 21, 2, 7]);
    const { summary } = await runFile(s, file, { runsDir: dir, ...o });
    expect(s.admin.stats().records_submitted).toBe(plan.sent);
    expect(summary.statuses.failed).toBe(plan.over_budget);
    expect(summary.jobs.total).toBe(plan.batches);
    expect(summary.creditsCharged).toBeLessThanOrEqual(plan.max_credits);
    expect(summary.exitCode).toBe(5);
  });
});
