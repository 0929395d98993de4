/**
 * A service that keeps at most one job per account refuses the next submission until that job
 * expires: a day. Told so (a Retry-After of a day, past the run's --timeout), the run does not
 * sit silent until --timeout: it downloads the job it has, writes the output with the refused
 * rows not sent, and ends. A spec-only service says nothing of how long (a bare 429): the run
 * tries again until its --timeout, and ends alike. Either way the same command, once the
 * service takes jobs again, sends the refused rows once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  clientForTest,
  contactRows,
  parseCsv,
  runFile,
  sandboxForTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

const DAY_MS = 86_400_000;

describe('submissions refused for a day (a quota of one job per account)', () => {
  it.concurrent.for(SANDBOX_MODES)(
    'the run downloads the job it has, ends without waiting out the day, and the same command later pays once for the rest ($name)',
    async ({ specOnly }, t) => {
      const s = await sandboxForTest(t, { specOnly, jobMs: 300, maxJobsPerAccount: 1 });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(40));
      // Real timers: a client that waited out the refusal would hang here until --timeout. A
      // spec-only service gives no length, so its run ends at its --timeout (3 s).
      const timeoutMs = specOnly ? 3000 : 2 * 3600_000;
      const client = clientForTest(t, { baseUrl: s.url, apiKey: s.apiKey, random: () => 0.5 });
      const api = toBulkApi(client, { deadline: Date.now() + timeoutMs });
      const o = { runsDir: join(dir, 'runs'), outputPath: join(dir, 'out.csv'), batchSize: 20 };
      const started = Date.now();
      const first = await runFile(s, file, { ...o, api, timeoutMs, concurrency: 1 });
      expect(Date.now() - started).toBeLessThan(specOnly ? 30_000 : 15_000);
      expect(first.summary.stopReason?.code).toBe('RATE_LIMITED');
      expect(first.summary).toMatchObject({ exitCode: 3, chargeUnknownRows: 0 });
      expect(first.summary.statuses).toMatchObject({ enriched: 20, failed: 20 });
      const errors = parseCsv(first.output)
        .slice(21)
        .map((r) => r[7]);
      expect(errors).toHaveLength(20);
      if (!specOnly)
        for (const e of errors) expect(e).toMatch(/asked to wait until .*, after the deadline/);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 20 });

      // A day later the first job has expired: the service takes jobs again.
      s.admin.advanceClock(DAY_MS + 60_000);
      const again = await runFile(s, file, { ...o, timeoutMs: 60_000 });
      expect(again.summary).toMatchObject({ exitCode: 0, resumed: true, chargeUnknownRows: 0 });
      expect(again.summary.statuses.enriched).toBe(40);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 40 });
    },
  );
});
