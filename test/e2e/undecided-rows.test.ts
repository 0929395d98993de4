import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  contactRows,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { journaled, untilJournaled } from '../helpers/journaled.js';

beforeAll(() => ensureBuilt());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A run reads ahead of its POSTs: the rows of the next batch are looked up in the results cache
 * while that batch waits for a place (`--concurrency`). Found by the chaos campaign (day 1 killed
 * there, day 2 run, day 1 resumed: 10 rows paid twice, no fault at all): those decisions were
 * journaled when made, so the resume sent that batch as decided, though day 2 had paid for its
 * rows and cached their answers meanwhile. They are now journaled right before the batch's POST.
 */
const CASES = SANDBOX_MODES.flatMap((m) =>
  (['SIGKILL', 'SIGINT'] as const).map((signal) => ({ ...m, signal })),
);

describe('rows a stopped run decided to send but never sent (e2e)', () => {
  it.concurrent.for(CASES)(
    '$name, $signal: day 1 stopped while its 2nd batch waits for a place, day 2 pays for those rows, day 1 resumed takes them from the cache (regression: paid twice)',
    async ({ specOnly, signal }, t) => {
      const sb = await sandboxForTest(t, { port: 0, host: '127.0.0.1', specOnly, jobMs: 1_000 });
      const env: Record<string, string> = {
        ...(await tempEnv()),
        ENRICH_BASE_URL: sb.url,
        ENRICH_API_KEY: sb.apiKey,
      };
      const dir = await tempDir();
      const rows = contactRows(32);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 30));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const opts = ['--batch-size', '10', '--concurrency', '1', '-q'];
      const day1Args = ['contacts', day1, '-o', join(dir, 'day1.out.csv'), ...opts];
      const killed = await spawnCli(day1Args, { env });
      const state = env.ENRICH_STATE_DIR!;
      expect(await untilJournaled(state, /"t":"accepted","batch":"0"/)).toBe(true);
      // The next batch's rows are read and decided at once; the batch waits for job 0 (1 s).
      await sleep(200);
      killed.child.kill(signal);
      expect(await killed.code).toBe(signal === 'SIGINT' ? 130 : null);
      expect(journaled(state, /"t":"submit","batch":"1"/)).toBe(false);
      expect(sb.admin.stats().credits_charged).toBe(10);
      await sleep(1_200); // job 0 done: day 2 downloads it rather than paying for its rows

      const second = await runCli(['contacts', day2, '-o', join(dir, 'day2.out.csv'), ...opts], {
        env,
      });
      expect(second.code, second.stderr).toBe(0);
      expect(sb.admin.stats().credits_charged).toBe(32);

      const resumed = await runCli(day1Args, { env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(sb.admin.stats().credits_charged).toBe(32);
    },
  );
});
