import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
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

const sandbox = sandboxPerTest();

describe('Ctrl-C while a POST is on the wire', () => {
  it.each(SANDBOX_MODES)(
    'the run ends once the POST is answered and its job journaled: the same command downloads it, nothing unconfirmed, nothing paid twice (regression: the spec-only job was held unconfirmed) ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(200));
      const client = fastClient(s);
      const real = toBulkApi(client);
      const abort = new AbortController();
      let posts = 0;
      // Batch 0 is accepted and then polled (pending); batch 1's POST is on the wire when
      // Ctrl-C comes, and answered after it.
      const api: BulkApi = {
        ...real,
        submit: async (...args) => {
          if (++posts === 2) {
            abort.abort();
            await delay(100);
          }
          return real.submit(...args);
        },
        results: async (...args) =>
          abort.signal.aborted ? real.results(...args) : { state: 'pending' as const },
      };
      const env = {
        now: Date.now,
        random: () => 0.5,
        signal: abort.signal,
        sleep: async (ms: number, signal?: AbortSignal) => {
          if (signal?.aborted) throw signal.reason;
          await delay(Math.min(ms, 5));
        },
      };
      const o = { runsDir: dir, outputPath: `${dir}/out.csv`, concurrency: 2 };
      await expect(
        runFile(undefined, file, { ...o, api, env, baseUrl: s.url }),
      ).rejects.toMatchObject({
        code: 'INTERRUPTED',
      });
      expect(s.admin.stats().jobs_submitted).toBe(2);

      const { summary, output } = await runFile(s, file, o);
      expect(summary.exitCode).toBe(0);
      expect(summary.statuses.enriched).toBe(200);
      expect(summary.chargeUnknownRows).toBe(0);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 200 });
      expect(parseCsv(output)).toHaveLength(201);
      await client.close();
    },
  );
});
