/**
 * A service that keeps at most one job per account refuses the next submission until that job
 * expires: a day. Told so (a Retry-After of a day, past the run's --timeout), the run does not
 * sit silent until --timeout: it downloads the job it has, writes the output with the refused
 * rows not sent, and ends. A spec-only service says nothing of how long (a bare 429): the run
 * tries again until its --timeout, and ends alike. Either way the same command, once the
 * service takes jobs again, sends the refused rows once.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { verifyEmailsFile } from '../../src/bulk/verify-emails.js';
import type { VerifySummary } from '../../src/pipeline/verify/types.js';
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

describe('verifications refused for a day', () => {
  it.concurrent.for(SANDBOX_MODES)(
    'verify-emails stops at once (a spec-only bare 429 is tried again), and the same command later pays once for each address ($name)',
    async ({ specOnly }, t) => {
      const s = await sandboxForTest(t, { specOnly });
      const dir = await tempDir();
      const input = join(dir, 'list.csv');
      const emails = Array.from({ length: 4 }, (_, i) => `lead${i}@firm${i % 3}.com`);
      await writeFile(input, `email\n${emails.join('\n')}\n`);
      s.admin.setFaults({ next: [{ status: 429, retry_after_s: DAY_MS / 1000 }] });
      const o = { input, output: join(dir, 'out.csv'), runsDir: join(dir, 'runs'), concurrency: 1 };
      const verify = () => {
        const client = clientForTest(t, { baseUrl: s.url, apiKey: s.apiKey, random: () => 0.5 });
        const service = { client, baseUrl: s.url };
        return verifyEmailsFile({
          ...o,
          service,
          cacheDir: join(dir, 'cache'),
        }) as Promise<VerifySummary>;
      };
      const started = Date.now();
      const first = await verify();
      expect(Date.now() - started).toBeLessThan(15_000);
      const paid = () => s.admin.stats().verification_credits_charged;
      if (specOnly) {
        expect(first.exitCode).toBe(0);
        expect(paid()).toBe(4);
      } else {
        // Nothing verified: the service is unavailable for now (exit 6), not a partial run.
        expect(first.exitCode).toBe(6);
        expect(first.stopReason?.message).toMatch(/asked to wait until .*, after the deadline/);
        expect(paid()).toBe(0);
      }
      // The service takes verifications again (a new process: a new client).
      const again = await verify();
      expect(again.exitCode).toBe(0);
      expect(paid()).toBe(4);
    },
  );
});
