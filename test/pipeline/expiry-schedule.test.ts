import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { balanceLog } from '../../src/pipeline/run/balance.js';
import type { BatchContext } from '../../src/pipeline/run/batch-context.js';
import { startBatch } from '../../src/pipeline/run/batch-task.js';
import { createBudget } from '../../src/pipeline/run/budget.js';
import type { BulkApi, RunProgress } from '../../src/pipeline/types.js';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import { openJournal } from '../../src/pipeline/journal/journal.js';
import type { PollEnv } from '../../src/pipeline/run/poll.js';
import { runFile, tempDir } from '../integration/bulk-harness.js';

// The sandbox cannot play this service: its 202 Retry-After is always the time left until
// the job is ready, so a client that honours it never sleeps past results that are ready.
// This one asks for 30 s whatever is left, as a real service may.

const T0 = Date.UTC(2026, 10, 21, 19, 0, 0);

/** A fake clock: sleeping advances it at once. */
function fakeClock(): PollEnv & { advance(ms: number): void } {
  let t = T0;
  return {
    now: () => t,
    sleep: async (ms) => void (t += ms),
    random: () => 0.5,
    advance: (ms) => void (t += ms),
  };
}

/**
 * A bulk service whose jobs are ready `readyMs` after submission, answer 202 with
 * Retry-After `retryAfterMs` until then, and whose results expire (`expiration_date`)
 * `ttlMs` after submission; it deletes them (404) `lagMs` later, as a server whose
 * clock is behind ours would.
 */
function expiringService(
  now: () => number,
  o: { readyMs: number; ttlMs: number; retryAfterMs: number; lagMs?: number },
) {
  const jobs = new Map<string, { at: number; records: Record<string, unknown>[] }>();
  const polls: number[] = [];
  const api: BulkApi = {
    async submit(_kind, body) {
      const id = `job-${jobs.size}`;
      const records = (body.items as Record<string, unknown>[]).map((item) => ({
        error: '',
        credit_charged: true,
        email: `found:${String(item.business_email)}`,
        custom_fields: item.custom_fields,
      }));
      jobs.set(id, { at: now(), records });
      const expires = Math.floor((now() + o.ttlMs) / 1000);
      return { job_id: id, download_url: `http://fake/${id}`, expiration_date: String(expires) };
    },
    async results(kind, jobId) {
      const job = jobs.get(jobId) as { at: number; records: Record<string, unknown>[] };
      polls.push(now() - job.at);
      if (now() >= job.at + o.ttlMs + (o.lagMs ?? 0)) {
        const path = `/${kind}/results/${jobId}.json`;
        throw new ApiError('API_NOT_FOUND', { status: 404, method: 'GET', path, message: 'gone' });
      }
      if (now() < job.at + o.readyMs) return { state: 'pending', retryAfterMs: o.retryAfterMs };
      return { state: 'done', records: job.records, remainingCredits: 100 };
    },
  };
  return { api, polls };
}

interface OutRow {
  row: number;
  status: string;
  error: string;
  record: { email?: string } | null;
}

/** One bulk run over three valid rows and an invalid one (one job), output as JSONL. */
async function run(
  dir: string,
  api: BulkApi,
  env: PollEnv,
  o: {
    wait?: boolean;
    timeoutMs?: number;
    onWarning?: (w: string) => void;
    onProgress?: (p: RunProgress) => void;
  } = {},
) {
  const file = join(dir, 'in.csv');
  await writeFile(file, 'Email,Note\na@x.io,1\nb@x.io,2\n,3\nc@x.io,4\n');
  const { summary, output } = await runFile(undefined, file, {
    ...(o.onWarning ? { onWarning: o.onWarning } : {}),
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    runsDir: join(dir, 'runs'),
    outputPath: join(dir, 'out.jsonl'),
    output: { format: 'jsonl', formulaEscape: 'never' },
    batchSize: 10,
    concurrency: 1,
    timeoutMs: o.timeoutMs ?? 2 * 3_600_000,
    wait: o.wait ?? true,
    api,
    env,
  });
  const rows = output
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as OutRow);
  return { summary, rows };
}

describe('polls scheduled by the results expiry', () => {
  it('Retry-After 30 s, results ready at 5 s and expiring at 20 s: the rows come out enriched', async () => {
    const env = fakeClock();
    const service = expiringService(env.now, {
      readyMs: 5000,
      ttlMs: 20_000,
      retryAfterMs: 30_000,
    });
    const { summary, rows } = await run(await tempDir('enrich-expiry-'), service.api, env);
    expect(rows.map((r) => r.status)).toEqual(['enriched', 'enriched', 'invalid', 'enriched']);
    expect(rows[3]?.record?.email).toBe('found:c@x.io');
    expect(summary.statuses.expired).toBe(0);
    expect(summary.exitCode).toBe(0);
    // Every poll came before the expiry, about a second apart.
    expect(service.polls).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
  });

  it('404s before the expiry cost nothing: the output equals a clean run', async () => {
    const opts = { readyMs: 5000, ttlMs: 3_600_000, retryAfterMs: 2000 };
    const cleanEnv = fakeClock();
    const clean = await run(
      await tempDir('enrich-expiry-'),
      expiringService(cleanEnv.now, opts).api,
      cleanEnv,
    );
    const env = fakeClock();
    const service = expiringService(env.now, opts);
    let injected = 0;
    const flaky: BulkApi = {
      submit: service.api.submit,
      async results(kind, jobId, url) {
        // A service (or a replica behind it) that does not know the job yet: 404 three times.
        if (injected++ < 3) {
          const path = `/${kind}/results/${jobId}.json`;
          throw new ApiError('API_NOT_FOUND', { status: 404, method: 'GET', path, message: '' });
        }
        return service.api.results(kind, jobId, url);
      },
    };
    const warnings: string[] = [];
    const counted: (number | undefined)[] = [];
    const { summary, rows } = await run(await tempDir('enrich-expiry-'), flaky, env, {
      onWarning: (w) => warnings.push(w),
      onProgress: (p) => counted.push(p.jobsNotFound),
    });
    expect(rows).toEqual(clean.rows);
    expect(summary.statuses.expired).toBe(0);
    expect(summary.exitCode).toBe(0);
    // Said once (the run shows no progress meanwhile), with when the 404s would mean expiry:
    // the journaled expiry (1 h after the submission at 0) plus the 5 minutes' skew margin.
    expect(warnings).toEqual([
      expect.stringMatching(
        /^job job-0 answered 404 \(not found\) before its results were due to expire: it is taken as still running, and its results count as expired only if it still answers 404 at 2026-11-21T20:05:00Z /,
      ),
    ]);
    // The progress counts the job as not found while it is, and no longer once it answers.
    expect(counted).toContain(1);
    expect(counted.at(-1)).toBeUndefined();
  });

  it('a job answering 404 until --timeout: its rows say so, not that it was still running', async () => {
    const env = fakeClock();
    const service = expiringService(env.now, { readyMs: 5000, ttlMs: 3_600_000, retryAfterMs: 0 });
    const gone: BulkApi = {
      submit: service.api.submit,
      async results(kind, jobId) {
        const path = `/${kind}/results/${jobId}.json`;
        throw new ApiError('API_NOT_FOUND', { status: 404, method: 'GET', path, message: '' });
      },
    };
    const { summary, rows } = await run(await tempDir('enrich-expiry-'), gone, env, {
      timeoutMs: 60_000,
    });
    expect(summary.exitCode).toBe(3);
    expect(rows[0]?.error).toBe(
      "job job-0 answered 404 (not found) at every poll since 2026-11-21T19:00:00Z, before its results were due to expire; run the same command again to ask again before 2026-11-21T20:00:00Z, when the job's results expire",
    );
  });

  it('a re-run after --no-wait schedules by the journaled expiry', async () => {
    const env = fakeClock();
    const dir = await tempDir('enrich-expiry-');
    // Results expire at 90 s; ready at 75 s. Honouring Retry-After alone, the re-run at
    // 40 s would poll at 40, 70 and 100 s: too late.
    const service = expiringService(env.now, {
      readyMs: 75_000,
      ttlMs: 90_000,
      retryAfterMs: 30_000,
    });
    const first = await run(dir, service.api, env, { wait: false });
    expect(first.summary.jobs.pending).toBe(1);
    env.advance(40_000);
    const { summary, rows } = await run(dir, service.api, env);
    expect(rows.map((r) => r.status)).toEqual(['enriched', 'enriched', 'invalid', 'enriched']);
    expect(summary.exitCode).toBe(0);
    expect(service.polls.every((at) => at < 90_000)).toBe(true);
    expect(service.polls.at(-1)).toBe(75_000);
  });

  it('at --timeout the rows say by when to run the command again', async () => {
    const env = fakeClock();
    const service = expiringService(env.now, {
      readyMs: Infinity,
      ttlMs: 3_600_000,
      retryAfterMs: 30_000,
    });
    const { summary, rows } = await run(await tempDir('enrich-expiry-'), service.api, env, {
      timeoutMs: 600_000,
    });
    expect(summary.exitCode).toBe(3);
    expect(rows[0]?.status).toBe('failed');
    expect(rows[0]?.error).toBe(
      "job job-0 was still running at --timeout; run the same command again to resume before 2026-11-21T20:00:00Z, when the job's results expire",
    );
  });
});

describe('the --no-wait message of a pending job', () => {
  it('names the expiry, or says it passed when the service still has the job after it', async () => {
    const env = fakeClock();
    const service = expiringService(env.now, {
      readyMs: Infinity,
      ttlMs: 90_000,
      retryAfterMs: 30_000,
      lagMs: 60_000,
    });
    const journal = await openJournal({
      runsDir: await tempDir('enrich-expiry-'),
      key: 'k',
      header: {
        kind: 'contacts',
        input: { path: '/in.csv', size: 1, sha256: 'ab'.repeat(32) },
        options: {},
        command: 'enrich contacts in.csv --no-wait',
      },
      restart: false,
      now: env.now,
    });
    const ctx: BatchContext = {
      kind: 'contacts',
      metadata: {},
      journal,
      api: service.api,
      env,
      balance: balanceLog(),
      deadline: 0,
      wait: false,
      resendUnconfirmed: false,
      words: CLI_WORDS,
      budget: createBudget(undefined, 1),
      splits: { accepted: false, blind: 0 },
      limit: (task) => task(),
      stopped: () => undefined,
      stop: () => undefined,
    };
    const items = [{ index: 0, element: { business_email: 'a@x.io' }, key: 'a' }];
    try {
      const [first] = await startBatch(ctx, '0', items, false).done;
      expect(first).toMatchObject({ state: 'pending', code: 'TIMEOUT' });
      expect(first?.error).toBe(
        "job job-0 is still running; run the same command again to fetch its results before 2026-11-21T19:01:30Z, when the job's results expire",
      );
      env.advance(120_000);
      const [late] = await startBatch(ctx, '0', items, false).done;
      expect(late?.error).toBe(
        "job job-0 is still running; run the same command again to fetch its results (the job's results were due to expire at 2026-11-21T19:01:30Z)",
      );
    } finally {
      await journal.close();
    }
  });
});
