import { cp } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { createClient } from '../../src/api/client.js';
import { realSleep } from '../../src/api/send.js';
import type { BulkApi, SubmitFn } from '../../src/pipeline/types.js';
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
          if (++posts !== 2) return real.submit(...args);
          // On the wire (the service takes 300 ms to answer) when Ctrl-C comes.
          s.admin.setFaults({ next: [{ delay_ms: 300, path: '/contacts' }] });
          const answer = real.submit(...args);
          await delay(50);
          abort.abort();
          return answer;
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

/**
 * A run of 40 rows in two batches against a service that refuses the second batch for an hour
 * once the first is accepted (a spec-only service sends no Retry-After: its bare 429s go on).
 * Every call of the client then waits, the first batch's polls too. Resolves once the refusal
 * came, with the run going on.
 */
async function refusedForAnHour(specOnly: boolean) {
  const s = await sandbox({ specOnly, jobMs: 1500 });
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(40));
  // Real timers: the client would really wait out the service's Retry-After.
  const client = createClient({ baseUrl: s.url, apiKey: s.apiKey, random: () => 0.5 });
  const real = toBulkApi(client, { deadline: Date.now() + 2 * 3600_000 });
  let first: ReturnType<SubmitFn> | undefined;
  const submit: SubmitFn = async (...args) => {
    if (!first) return (first = real.submit(...args));
    await first;
    const refusals = specOnly ? { rates: { 429: 1 } } : {};
    s.admin.setFaults({ ...refusals, next: [{ status: 429, retry_after_s: 3600 }] });
    return real.submit(...args);
  };
  // It passes the run's hooks on to the client's submit: each attempt is journaled.
  const api: BulkApi = { ...real, submit: Object.assign(submit, { journalsAttempts: true }) };
  const abort = new AbortController();
  const env = { now: Date.now, random: () => 0.5, signal: abort.signal, sleep: realSleep };
  const o = { runsDir: join(dir, 'runs'), outputPath: join(dir, 'out.csv'), batchSize: 20 };
  const run = runFile(undefined, file, { ...o, api, env, baseUrl: s.url });
  run.catch(() => undefined); // awaited by the test
  while (client.throttled() === 0) await delay(5);
  await delay(200);
  return { s, dir, file, o, client, abort, run };
}

describe('Ctrl-C while a submission waits out a 429', () => {
  it.each(SANDBOX_MODES)(
    'the run ends at once, not after the Retry-After (an hour), though a job is being polled: the refused batch was never processed, and the same command sends it once ($name)',
    async ({ specOnly }) => {
      const { s, file, o, client, abort, run } = await refusedForAnHour(specOnly);
      const stopped = Date.now();
      abort.abort();
      await expect(run).rejects.toMatchObject({ code: 'INTERRUPTED' });
      expect(Date.now() - stopped).toBeLessThan(10_000);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 20 });
      await client.close();

      s.admin.setFaults({});
      const { summary } = await runFile(s, file, o);
      expect(summary).toMatchObject({ exitCode: 0, resumed: true, chargeUnknownRows: 0 });
      expect(summary.statuses.enriched).toBe(40);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 40 });
    },
  );

  it.each(SANDBOX_MODES)(
    'killed during that wait (the journal as it is then), the resume knows the refused batch was not processed: it sends it, nothing unconfirmed, nothing paid twice ($name)',
    async ({ specOnly }) => {
      const { s, dir, file, o, client, abort, run } = await refusedForAnHour(specOnly);
      // The state a SIGKILL would leave: the journal on disk now (without its lock).
      const killed = join(dir, 'killed');
      await cp(o.runsDir, killed, { recursive: true, filter: (p) => basename(p) !== 'lock' });
      abort.abort();
      await run.catch(() => undefined);
      await client.close();

      s.admin.setFaults({});
      const { summary } = await runFile(s, file, { ...o, runsDir: killed });
      expect(summary).toMatchObject({ exitCode: 0, resumed: true, chargeUnknownRows: 0 });
      expect(summary.statuses.enriched).toBe(40);
      expect(s.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 40 });
    },
  );
});
