import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import {
  CONTACT_HEADER,
  contactRows,
  fastClient,
  runFile,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

const sandbox = sandboxPerTest();

/** The bulk API of `s`, counting the jobs in flight (accepted, results not yet back). */
function watched(s: SandboxHandle) {
  const api = toBulkApi(fastClient(s));
  let now = 0;
  let most = 0;
  const counting: BulkApi = {
    ...api,
    submit: async (...a) => {
      const job = await api.submit(...a);
      most = Math.max(most, ++now);
      return job;
    },
    results: async (...a) => {
      const answer = await api.results(...a);
      if (answer.state === 'done') now--;
      return answer;
    },
  };
  return { api: counting, most: () => most };
}

/** Real time: the jobs take real milliseconds, and the run watches how long (polls at most 50 ms apart). */
const env = {
  now: Date.now,
  random: () => 0.5,
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.min(ms, 50))),
};

async function run(s: SandboxHandle, rows: number, o: { concurrency?: number; batchSize: number }) {
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(rows));
  const w = watched(s);
  const r = await runFile(s, file, {
    runsDir: dir,
    api: w.api,
    env,
    ...o,
    concurrency: o.concurrency,
  });
  expect(r.summary.exitCode).toBe(0);
  expect(r.summary.statuses.enriched).toBe(rows);
  return w.most();
}

describe('jobs in flight', () => {
  it('--concurrency N bounds the bulk jobs in flight, not only the requests', async () => {
    const s = await sandbox({ jobMs: 200 });
    expect(await run(s, 20, { concurrency: 1, batchSize: 5 })).toBe(1);
    expect(await run(s, 30, { concurrency: 3, batchSize: 5 })).toBe(3);
  });

  it('adaptive: a service that runs every job side by side gets more than the first 4', async () => {
    const s = await sandbox({ jobMs: 1500 });
    expect(await run(s, 160, { batchSize: 10 })).toBeGreaterThanOrEqual(8);
  });

  it('adaptive, spec-only (no Retry-After): every job accepted makes room for one more before any ends', async () => {
    // 16 jobs of 1.5 s: with 4 in flight until the first ended, 4 rounds; here one.
    const s = await sandbox({ jobMs: 1500, specOnly: true });
    expect(await run(s, 160, { batchSize: 10 })).toBe(16);
  });

  it('adaptive: a service that queues past 2 jobs is not given more than the first 4', async () => {
    // Jobs of 2 s: Retry-After (whole seconds) can tell a queued job from a running one.
    const s = await sandbox({ jobMs: 2000, parallelJobs: 2 });
    expect(await run(s, 60, { batchSize: 10 })).toBeLessThanOrEqual(4);
  });
});
