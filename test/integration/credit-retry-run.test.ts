import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { ApiError } from '../../src/errors.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import {
  fastClient,
  CONTACT_HEADER,
  contactRows,
  runFile,
  SANDBOX_MODES,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

// Credit retries seen through a run's summary, against the sandbox in both modes (issue 21:
// mutants of credit-retry.ts that no test saw). Spend is reported from the service's
// numbers: what this run paid, apart from what earlier runs paid.

const sandbox = sandboxPerTest();

describe('credit retries in the run summary', () => {
  it.each(SANDBOX_MODES)(
    'a retry after a top-up reports what it paid: 100 this run, 100 earlier; a later run 0 and 200 ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ credits: 100, specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(200));
      // One batch of 200: 100 rows enriched, 100 out of credits.
      const o = { runsDir: dir, batchSize: 200, concurrency: 1 };
      const first = await runFile(s, file, o);
      expect(first.summary.exitCode).toBe(5);
      expect(first.summary.creditsCharged).toBe(100);
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(s.admin.stats().credits_charged).toBe(200);
      expect(second.summary.creditsCharged).toBe(100);
      expect(second.summary.creditsChargedEarlier).toBe(100);
      expect(second.summary.statuses.enriched).toBe(200);
      // Nothing left to send: the run reads both spools back, and pays nothing.
      const third = await runFile(s, file, o);
      expect(s.admin.stats().credits_charged).toBe(200);
      expect(third.summary.creditsCharged).toBe(0);
      expect(third.summary.creditsChargedEarlier).toBe(200);
      expect(third.summary.statuses.enriched).toBe(200);
      expect(third.output).toBe(second.output);
    },
  );

  it.each(SANDBOX_MODES)(
    'a credit retry the service splits (413) is read back part by part by a later run, never sent again ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ credits: 100, specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(200));
      const o = { runsDir: dir, batchSize: 200, concurrency: 1 };
      expect((await runFile(s, file, o)).summary.exitCode).toBe(5);
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      // The retry of 100 rows is refused as too large: it goes as two parts of 50.
      const real = toBulkApi(fastClient(s));
      const small: BulkApi = {
        ...real,
        submit: (kind, body, key) =>
          body.items.length > 60
            ? Promise.reject(
                new ApiError('API_PAYLOAD_TOO_LARGE', {
                  status: 413,
                  method: 'POST',
                  path: `/${kind}`,
                  message: `POST /${kind}: 413 Payload Too Large`,
                }),
              )
            : real.submit(kind, body, key),
      };
      const second = await runFile(s, file, { ...o, api: small });
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.creditsCharged).toBe(100);
      expect(s.admin.stats().jobs_submitted).toBe(3);
      const third = await runFile(s, file, o);
      expect(s.admin.stats().jobs_submitted).toBe(3);
      expect(s.admin.stats().credits_charged).toBe(200);
      expect(third.summary.statuses.enriched).toBe(200);
      // Regression: the split retry's parts were counted as this run's charges (100), though
      // an earlier run paid for them and this one paid nothing.
      expect(third.summary.creditsCharged).toBe(0);
      expect(third.summary.creditsChargedEarlier).toBe(200);
      expect(third.output).toBe(second.output);
    },
  );
});
