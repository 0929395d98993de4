import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { ApiError, EnrichError } from '../../src/errors.js';
import type { BulkApi, JobEvent } from '../../src/pipeline/types.js';
import {
  fastClient,
  parseCsv,
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

/** The cells of column `name`, row by row. */
const col = (rows: string[][], name: string) => {
  const i = (rows[0] as string[]).indexOf(name);
  expect(i).toBeGreaterThanOrEqual(0);
  return rows.slice(1).map((r) => r[i] as string);
};

/** The service's refusal of a retry too large to send at once (it goes in two parts). */
const tooLarge = (kind: string) =>
  new ApiError('API_PAYLOAD_TOO_LARGE', {
    status: 413,
    method: 'POST',
    path: `/${kind}`,
    message: `POST /${kind}: 413 Payload Too Large`,
  });

/** A run of `rows` rows (one batch of `batchSize`) that ran out at `credits`, then a top-up. */
async function ranOutThenToppedUp(
  specOnly: boolean,
  credits: number,
  rows: number,
  batchSize: number,
) {
  const s = await sandbox({ credits, specOnly });
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(rows));
  const o = { runsDir: dir, batchSize, concurrency: 1 };
  expect((await runFile(s, file, o)).summary.exitCode).toBe(5);
  s.admin.updateAccount(s.accountId, { credits: 1000 });
  return { s, file, o };
}

/** The run after: it finishes (exit 0) with every row enriched, and the account paid once per row. */
async function laterRunFinishes(
  s: Awaited<ReturnType<typeof ranOutThenToppedUp>>['s'],
  file: string,
  o: Parameters<typeof runFile>[2],
  rows: number,
) {
  const third = await runFile(s, file, o);
  expect(third.summary.exitCode).toBe(0);
  expect(third.summary.statuses.enriched).toBe(rows);
  expect(s.admin.stats().credits_charged).toBe(rows);
}

describe('credit retries in the run summary', () => {
  it.each(SANDBOX_MODES)(
    'after a top-up, rows with no match are asked once more and end not_found, never sent for ever ($name)',
    async ({ specOnly }) => {
      // Regression: the retry's "No match found" records were read as the old shortage's, and
      // each run sent them again, one job after another, without end.
      const s = await sandbox({ credits: 60, specOnly });
      const dir = await tempDir();
      const file = await writeCsv(
        dir,
        'in.csv',
        CONTACT_HEADER,
        contactRows(200, { noMatchEvery: 10 }),
      );
      const o = { runsDir: dir, batchSize: 100, concurrency: 1 };
      expect((await runFile(s, file, o)).summary.exitCode).toBe(5);
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const jobsBefore = s.admin.stats().jobs_submitted;
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses).toMatchObject({ enriched: 180, not_found: 20, failed: 0 });
      // One retry per batch that ran out, then done.
      expect(s.admin.stats().jobs_submitted - jobsBefore).toBeLessThanOrEqual(2);
      expect(s.admin.stats().credits_charged).toBe(180);
      const rows = parseCsv(second.output);
      const status = rows[0]!.indexOf('enrich_status');
      const nomatch = rows.slice(1).filter((r) => r.some((c) => c.includes('nomatch')));
      expect(nomatch).toHaveLength(20);
      expect(nomatch.every((r) => r[status] === 'not_found')).toBe(true);
      // A later run sends nothing.
      const third = await runFile(s, file, o);
      expect(third.summary.exitCode).toBe(0);
      expect(s.admin.stats().jobs_submitted - jobsBefore).toBeLessThanOrEqual(2);
      expect(third.output).toBe(second.output);
    },
  );

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
      const events: JobEvent[] = [];
      const second = await runFile(s, file, { ...o, onJob: (e) => events.push(e) });
      expect(second.summary.exitCode).toBe(0);
      // The retry is told before it is sent: the batch, its 100 rows, and why.
      const retried = events.filter((e) => e.t === 'retried');
      expect(retried).toEqual([{ t: 'retried', batch: '0', rows: 100, reason: 'out-of-credits' }]);
      expect(events.indexOf(retried[0]!)).toBeLessThan(
        events.findIndex((e) => e.t === 'submitted'),
      );
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
      // The balance it reports is the last one the service sent (the retry's), not the dry
      // batch's 0, though this run asked the service nothing.
      expect(third.summary.remainingCredits).toBe(900);
      expect(third.output).toBe(second.output);
    },
  );

  it.each(SANDBOX_MODES)(
    'a credit retry the service splits (413) is read back part by part by a later run, never sent again ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 100, 200, 200);
      // The retry of 100 rows is refused as too large: it goes as two parts of 50.
      const real = toBulkApi(fastClient(s));
      const small: BulkApi = {
        ...real,
        submit: (kind, body, key) =>
          body.items.length > 60 ? Promise.reject(tooLarge(kind)) : real.submit(kind, body, key),
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

  it.each(SANDBOX_MODES)(
    'a split credit retry whose second part is not sent: those rows stay failed, saying why, never not_found; a later run sends them ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 100, 200, 200);
      // The retry of 100 rows is refused as too large (413); its first part of 50 goes, the
      // second's POST fails. The first part's answer shows credits left (950): the rows of
      // the second are still the dry answer's, to be read as its shortage.
      const real = toBulkApi(fastClient(s));
      let parts = 0;
      const small: BulkApi = {
        ...real,
        submit: (kind, body, key) =>
          body.items.length > 60
            ? Promise.reject(tooLarge(kind))
            : ++parts === 1
              ? real.submit(kind, body, key)
              : Promise.reject(new EnrichError('NETWORK', `POST /${kind}: NETWORK`)),
      };
      const second = await runFile(s, file, { ...o, api: small });
      expect(second.summary.exitCode).toBe(3);
      expect(second.summary.statuses).toMatchObject({ enriched: 150, failed: 50, not_found: 0 });
      const errors = col(parseCsv(second.output), 'enrich_error');
      expect(errors.filter((e) => e.includes('POST /contacts: NETWORK'))).toHaveLength(50);
      await laterRunFinishes(s, file, o, 200);
    },
  );

  it.each(SANDBOX_MODES)(
    'the n-th credit retry of a batch is its batch `<batch>.c<n>`: dry again, the next run sends `0.c2`, never a name an earlier retry had ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 50, 100, 100);
      s.admin.updateAccount(s.accountId, { credits: 20 });
      const sentBy = async () => {
        const events: JobEvent[] = [];
        const run = await runFile(s, file, { ...o, onJob: (e) => events.push(e) });
        return { run, sent: events.filter((e) => e.t === 'submitted').map((e) => e.batch) };
      };
      // 50 rows sent again, 20 enriched, the account dry again (exit 5).
      const second = await sentBy();
      expect(second.sent).toEqual(['0.c1']);
      expect(second.run.summary.exitCode).toBe(5);
      expect(second.run.summary.statuses).toMatchObject({ enriched: 70, failed: 30 });
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const third = await sentBy();
      expect(third.sent).toEqual(['0.c2']);
      expect(third.run.summary.exitCode).toBe(0);
      expect(third.run.summary.statuses.enriched).toBe(100);
      expect(s.admin.stats().credits_charged).toBe(100);
      expect(s.admin.stats().jobs_submitted).toBe(3);
    },
  );

  it.each(SANDBOX_MODES)(
    'retries within --max-credits: 20 rows of 50, the rest stays failed and stops the run (exit 5); a later run sends them ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 50, 100, 100);
      const second = await runFile(s, file, { ...o, maxCredits: 20 });
      expect(s.admin.stats().credits_charged).toBe(70);
      expect(second.summary.statuses).toMatchObject({ enriched: 70, failed: 30 });
      expect(second.summary.creditsCharged).toBe(20);
      expect(second.summary.exitCode).toBe(5);
      expect(second.summary.stopReason?.code).toBe('CREDITS_EXHAUSTED');
      const third = await runFile(s, file, o);
      expect(s.admin.stats().credits_charged).toBe(100);
      expect(third.summary.statuses.enriched).toBe(100);
      expect(third.summary.creditsCharged).toBe(30);
      expect(third.summary.creditsChargedEarlier).toBe(70);
      expect(third.summary.exitCode).toBe(0);
    },
  );

  it.each([
    ['the account is dry again (402)', 'CREDITS_EXHAUSTED', 5],
    // Exit 6 only when nothing came back at all; here the first job did: partial.
    ['the service cannot be reached', 'NETWORK', 3],
  ] as const)(
    'a retry whose POST fails because %s: its rows stay failed saying why, and a later run sends them',
    async (_why, code, exit) => {
      const { s, file, o } = await ranOutThenToppedUp(false, 50, 100, 100);
      const real = toBulkApi(fastClient(s));
      const refusing: BulkApi = {
        ...real,
        submit: () => Promise.reject(new EnrichError(code, `POST /contacts: ${code}`)),
      };
      const second = await runFile(s, file, { ...o, api: refusing });
      expect(second.summary.exitCode).toBe(exit);
      expect(second.summary.statuses).toMatchObject({ enriched: 50, failed: 50 });
      const errors = col(parseCsv(second.output), 'enrich_error');
      expect(errors.filter((e) => e.includes(`POST /contacts: ${code}`))).toHaveLength(50);
      expect(second.summary.stopReason?.code).toBe(code);
      expect(errors.filter((e) => e !== '')).toHaveLength(50);
      await laterRunFinishes(s, file, o, 100);
    },
  );

  it.each(SANDBOX_MODES)(
    'a credit retry --max-credits has no room for stops the run for the limit only: a batch whose rows the limit already took is still sent ($name)',
    async ({ specOnly }) => {
      // Batch 0 ran out at 25 of its 50 rows; batch 1 was never sent.
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 25, 100, 50);
      const events: JobEvent[] = [];
      const second = await runFile(s, file, {
        ...o,
        maxCredits: 50,
        onJob: (e) => events.push(e),
      });
      // The limit's 50 credits go to batch 1's 50 rows; batch 0's 25 rows stay failed.
      expect(events.filter((e) => e.t === 'submitted').map((e) => e.batch)).toEqual(['1']);
      expect(events.filter((e) => e.t === 'retried')).toEqual([]);
      expect(second.summary.statuses).toMatchObject({ enriched: 75, failed: 25 });
      expect(second.summary.exitCode).toBe(5);
      expect(second.summary.stopReason).toEqual({
        code: 'CREDITS_EXHAUSTED',
        message: '--max-credits 50 reached',
      });
      expect(s.admin.stats().credits_charged).toBe(75);
    },
  );

  it.each(SANDBOX_MODES)(
    'once the run stopped (a retry’s POST failed), the next batch’s credit retry is neither sent nor said to be: its rows keep their shortage ($name)',
    async ({ specOnly }) => {
      // Two batches of 100 sent at once: 50 rows enriched, 150 out of credits.
      const s = await sandbox({ credits: 50, specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(200));
      const o = { runsDir: dir, batchSize: 100 };
      expect((await runFile(s, file, { ...o, concurrency: 2 })).summary.exitCode).toBe(5);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const real = toBulkApi(fastClient(s));
      const refusing: BulkApi = {
        ...real,
        submit: () => Promise.reject(new EnrichError('NETWORK', 'POST /contacts: NETWORK')),
      };
      const events: JobEvent[] = [];
      const second = await runFile(s, file, {
        ...o,
        concurrency: 1,
        api: refusing,
        onJob: (e) => events.push(e),
      });
      expect(second.summary.exitCode).toBe(3);
      expect(events.filter((e) => e.t === 'retried').map((e) => e.batch)).toEqual(['0']);
      expect(second.summary.jobs).toMatchObject({ total: 3, failed: 1, unsent: 0 });
      const errors = col(parseCsv(second.output), 'enrich_error');
      expect(errors.filter((e) => e.includes('NETWORK'))).toHaveLength(50);
      expect(second.summary.statuses).toMatchObject({ enriched: 50, failed: 150 });
    },
  );

  it('a retry journaled by a run whose answer was lost is resent exactly as it was to a service that honours keys: paid once', async () => {
    const { s, file, o } = await ranOutThenToppedUp(false, 50, 100, 100);
    const real = toBulkApi(fastClient(s));
    const lossy: BulkApi = {
      ...real,
      submit: async (...args) => {
        await real.submit(...args);
        throw new EnrichError('NETWORK', 'connection reset after the request was sent');
      },
    };
    await runFile(s, file, { ...o, maxCredits: 20, api: lossy });
    expect(s.admin.stats().credits_charged).toBe(70);
    // Under a limit it does not fit, the journaled retry of 20 rows is not cut to fit: it
    // goes as it was, or not at all.
    const cut = await runFile(s, file, { ...o, maxCredits: 10 });
    expect(s.admin.stats().credits_charged).toBe(70);
    expect(cut.summary.statuses).toMatchObject({ enriched: 50, failed: 50 });
    expect(cut.summary.exitCode).toBe(5);
    // Now under a limit it fits: the journaled retry of 20 rows goes as it was.
    const third = await runFile(s, file, { ...o, maxCredits: 20 });
    expect(s.admin.stats().credits_charged).toBe(70);
    expect(third.summary.statuses).toMatchObject({ enriched: 70, failed: 30 });
  });

  it('a retry still running at --timeout: its rows say which job to fetch, and a later run fetches it (paid once)', async () => {
    let t = Date.now();
    const s = await sandbox({ credits: 50, jobMs: 3_600_000, now: () => t });
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(100));
    const env = { now: () => t, random: () => 0.5, sleep: async (ms: number) => void (t += ms) };
    const o = { runsDir: dir, batchSize: 100, concurrency: 1, env, timeoutMs: 7_200_000 };
    expect((await runFile(s, file, o)).summary.exitCode).toBe(5);
    s.admin.updateAccount(s.accountId, { credits: 1000 });
    const second = await runFile(s, file, { ...o, timeoutMs: 600_000 });
    expect(second.summary.exitCode).toBe(3);
    const rows = parseCsv(second.output);
    const at = (rows[0] as string[]).indexOf('enrich_error');
    const pending = rows.slice(1).filter((r) => /still running at --timeout/.test(r[at] as string));
    expect(pending).toHaveLength(50);
    expect(pending[0]?.[at]).toMatch(/^job \S+ /);
    // The summary lists that job among the run's, to fetch (the batch's own job too).
    const job = /^job (\S+) /.exec(pending[0]![at] as string)![1]!;
    expect(second.summary.jobs.ids).toHaveLength(2);
    expect(second.summary.jobs.ids).toContain(job);
    t += 3_600_000;
    await laterRunFinishes(s, file, o, 100);
  });
});

// Regression (F1): rows a job left out for lack of credits were written not_found (exit 0,
// cached as no-match, never sent again) when the results were downloaded after a top-up: the
// download's `remaining_credits` is the balance then, not while the job ran.
describe('an answer downloaded after a top-up', () => {
  /**
   * A sandbox whose jobs take a minute on a clock the test moves (`clock.t`; the run's sleeps
   * move it too, or `sleep` instead), and a file of 21 rows, 3 of them without a match.
   */
  async function clocked(specOnly: boolean, credits: number, sleep?: (ms: number) => void) {
    const clock = { t: Date.now() };
    const s = await sandbox({ credits, specOnly, jobMs: 60_000, now: () => clock.t });
    const dir = await tempDir();
    const rows = contactRows(21, { noMatchEvery: 7 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const env = {
      now: () => clock.t,
      random: () => 0.5,
      sleep: async (ms: number) => {
        sleep?.(ms);
        clock.t += ms;
      },
    };
    return { s, dir, file, clock, env };
  }

  /** The 21 rows sent with 5 credits and not waited for; then a top-up. */
  async function sentThenToppedUp(specOnly: boolean) {
    const { s, dir, file, clock, env } = await clocked(specOnly, 5);
    const o = { runsDir: dir, batchSize: 100, concurrency: 1, env };
    const first = await runFile(s, file, { ...o, wait: false });
    expect(first.summary.jobs.pending).toBe(1);
    s.admin.updateAccount(s.accountId, { credits: 1000 });
    clock.t += 60_000;
    return { s, file, o };
  }

  it.each(SANDBOX_MODES)(
    'sends the rows it may have left out for credits once more, in the same run: 18 enriched, 3 not_found, exit 0 ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await sentThenToppedUp(specOnly);
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses).toMatchObject({ enriched: 18, not_found: 3, failed: 0 });
      // The first job paid for 5 rows, the retry for the other 13 that match: each once.
      expect(s.admin.stats().credits_charged).toBe(18);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      const rows = parseCsv(second.output);
      const nomatch = rows.slice(1).filter((r) => r.some((c) => c.includes('nomatch')));
      expect(nomatch.map((r) => r[rows[0]!.indexOf('enrich_status')])).toEqual([
        'not_found',
        'not_found',
        'not_found',
      ]);
      // The retry's answer is final: a later run sends nothing, and writes the same.
      const third = await runFile(s, file, o);
      expect(third.summary.exitCode).toBe(0);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(third.output).toBe(second.output);
    },
  );

  it.each(SANDBOX_MODES)(
    'read without a retry (--max-credits 0), the rows it may have left out stay failed, not not_found (exit 5) ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await sentThenToppedUp(specOnly);
      const capped = await runFile(s, file, { ...o, maxCredits: 0 });
      expect(capped.summary.exitCode).toBe(5);
      // The 3 rows without a match cannot be told from the 13 skipped: all 16 are failed.
      expect(capped.summary.statuses).toMatchObject({ enriched: 5, not_found: 0, failed: 16 });
      expect(s.admin.stats().jobs_submitted).toBe(1);
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses).toMatchObject({ enriched: 18, not_found: 3, failed: 0 });
      expect(s.admin.stats().credits_charged).toBe(18);
    },
  );

  it.each(SANDBOX_MODES)(
    'a job this run sent, whose balance rose before its download: the rows it may have left out are failed (exit 3), and the next run sends them once ($name)',
    async ({ specOnly }) => {
      // A top-up (or an automatic refill) while the job runs.
      const { s, dir, file, env } = await clocked(specOnly, 5, () => {
        if (s.admin.stats().jobs_submitted === 1)
          s.admin.updateAccount(s.accountId, { credits: 1000 });
      });
      const o = { runsDir: dir, batchSize: 100, concurrency: 1, env };
      const first = await runFile(s, file, o);
      expect(first.summary.exitCode).toBe(3);
      expect(first.summary.statuses).toMatchObject({ enriched: 5, not_found: 0, failed: 16 });
      const rows = parseCsv(first.output);
      const at = (rows[0] as string[]).indexOf('enrich_error');
      const unsure = rows
        .slice(1)
        .filter((r) => /perhaps for lack of credits/.test(r[at] as string));
      expect(unsure).toHaveLength(16);
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses).toMatchObject({ enriched: 18, not_found: 3, failed: 0 });
      expect(s.admin.stats().credits_charged).toBe(18);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      const third = await runFile(s, file, o);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(third.output).toBe(second.output);
    },
  );

  it.each(SANDBOX_MODES)(
    'a job this run sent and downloaded with no rise of the balance: its rows without a match are not_found at once, sent once ($name)',
    async ({ specOnly }) => {
      const { s, dir, file, env } = await clocked(specOnly, 1000);
      const first = await runFile(s, file, { runsDir: dir, batchSize: 10, concurrency: 4, env });
      expect(first.summary.exitCode).toBe(0);
      expect(first.summary.statuses).toMatchObject({ enriched: 18, not_found: 3 });
      expect(s.admin.stats().jobs_submitted).toBe(3);
    },
  );
});

// Regression: with --no-dedupe, identical rows of one batch whose records came back without
// row ids (joined by their echo) were judged each with all of its twins' records, so a twin
// the job skipped for credits, beside one that got a match, was never sent again.
describe('--no-dedupe twins answered without row ids, cut by the credits between them', () => {
  it.each(SANDBOX_MODES)(
    'after a top-up the skipped twin is sent once more, the matched one keeps its match: each row paid once ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ credits: 4, specOnly, faults: { drop_custom_fields: true } });
      const dir = await tempDir();
      // Row 4 repeats row 3, row 9 row 8; the job's 4 credits end between rows 3 and 4.
      const rows = contactRows(10, { dupEvery: 5 });
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
      const o = { runsDir: dir, batchSize: 100, concurrency: 1, dedupe: false };
      const first = await runFile(s, file, o);
      expect(first.summary.exitCode).toBe(5);
      expect(first.summary.statuses).toMatchObject({ enriched: 4, failed: 6 });
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses).toMatchObject({ enriched: 10, failed: 0, not_found: 0 });
      // One retry, of the six rows skipped (row 4 among them); each of the ten rows paid once.
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(s.admin.stats().records_submitted).toBe(16);
      expect(s.admin.stats().credits_charged).toBe(10);
      expect(second.summary.creditsCharged).toBe(6);
      const out = parseCsv(second.output);
      const email = (out[0] as string[]).indexOf('enriched_email');
      expect(out.slice(1).map((r) => r[email])).toEqual(rows.map((r) => r[3]));
      // Nothing is left to send: a later run writes the same, paying nothing.
      const third = await runFile(s, file, o);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(third.output).toBe(second.output);
    },
  );
});

describe('--no-dedupe twin companies (--top 2) answered without row ids, cut by the credits between them', () => {
  /** The sandbox's answers, their records in reverse order (the spec promises no order). */
  const reversing = (s: Parameters<typeof fastClient>[0]): BulkApi => {
    const real = toBulkApi(fastClient(s));
    return {
      ...real,
      results: async (...args) => {
        const answer = await real.results(...args);
        if (answer.state !== 'done') return answer;
        const { body: _asSent, ...rest } = answer;
        return { ...rest, records: [...answer.records].reverse() };
      },
    };
  };

  it.each(SANDBOX_MODES)(
    'the matches go whole to the first twin, whatever the order of the answer, and the skipped one is sent again after a top-up ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({
        credits: 2,
        specOnly,
        faults: { drop_custom_fields: true },
      });
      const dir = await tempDir();
      const file = await writeCsv(
        dir,
        'co.csv',
        ['Company', 'Website'],
        [
          ['', 'acme.com'],
          ['', 'acme.com'],
        ],
      );
      const o = {
        kind: 'companies' as const,
        runsDir: dir,
        dedupe: false,
        metadata: { top_matches_returned: 2 },
        api: reversing(s),
      };
      const first = await runFile(s, file, o);
      expect(first.summary.exitCode).toBe(5);
      const before = parseCsv(first.output);
      expect(col(before, 'enrich_status')).toEqual(['enriched', 'failed']);
      expect(col(before, 'enrich_error')[0]).toBe('');
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const second = await runFile(s, file, o);
      expect(second.summary.exitCode).toBe(0);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(s.admin.stats().records_submitted).toBe(3);
      expect(s.admin.stats().credits_charged).toBe(4);
      const out = parseCsv(second.output);
      expect(col(out, 'enrich_status')).toEqual(['enriched', 'enriched']);
      expect(col(out, 'enrich_error')).toEqual(['', '']);
      // Each twin has the company's two matches, each paid once.
      const [a, b] = [col(out, 'enriched_name'), col(out, 'enriched_name_2')];
      expect(a[0]).not.toBe(b[0]);
      expect(new Set([a[1], b[1]])).toEqual(new Set([a[0], b[0]]));
      const third = await runFile(s, file, o);
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(third.output).toBe(second.output);
    },
  );
});
