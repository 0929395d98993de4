import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../src/pipeline/journal/run-lock.js';
import { keepBatchKeys } from '../../src/pipeline/journal/batch-keys.js';
import { openJournal } from '../../src/pipeline/journal/journal.js';
import { runningNow, settleEarlierRuns } from '../../src/pipeline/run/earlier-runs.js';
import type { BulkApi, CachedAnswer } from '../../src/pipeline/types.js';
import { EnrichError } from '../../src/errors.js';
import { ROW_FIELD } from '../../src/pipeline/join/join.js';

// The jobs an earlier run of a file left not downloaded before the file changed (earlier-runs.ts),
// seen apart from a service: what is waited for, what is left alone, what is kept.

const options = { service: 'http://127.0.0.1:1', metadata: {} };
const header = (sha: string) => ({
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 10, sha256: sha.repeat(64) },
  options,
  command: 'enrich contacts leads.csv',
});

/** A new runs directory with the journal of an earlier run (content `a`) open. */
async function earlierJournal() {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-earlier-'));
  const j = await openJournal({
    runsDir,
    key: 'old',
    header: header('a'),
    restart: false,
    now: () => 1,
  });
  return { runsDir, j };
}

/** A runs directory holding one earlier run (content `a`) with one job accepted, `expires` when given. */
async function earlierRun(expires: number | null = null) {
  const { runsDir, j } = await earlierJournal();
  await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i0' });
  await j.append({ t: 'accepted', batch: '0', job: 'job-0', url: 'http://x/r/job-0', expires });
  await j.close();
  return runsDir;
}

const record = (row: number, email: string) => ({
  error: '',
  credit_charged: true,
  email,
  custom_fields: { [ROW_FIELD]: row },
  original_fields: { business_email: email },
});

/** A clock that moves only when slept, and a service whose jobs are pending `pendingFor` ms. */
function rig(
  pendingFor: number,
  answer: () => { records: Record<string, unknown>[]; remainingCredits: number } = () => ({
    records: [record(0, 'a@x.io'), record(1, 'b@x.io')],
    remainingCredits: 90,
  }),
) {
  let t = 1_000;
  const kept = new Map<string, CachedAnswer>();
  const asked: string[] = [];
  const api = {
    results: async (_kind: string, jobId: string) => {
      asked.push(jobId);
      return t < 1_000 + pendingFor
        ? { state: 'pending' as const }
        : { state: 'done' as const, ...answer() };
    },
  } as unknown as BulkApi;
  const env = {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
    random: () => 0.5,
  };
  const cache = {
    get: (k: string) => kept.get(k),
    put: (k: string, a: CachedAnswer) => void kept.set(k, a),
  };
  const warnings: string[] = [];
  const context = (runsDir: string, deadlineIn: number) => ({
    runsDir,
    key: 'new',
    kind: 'contacts' as const,
    input: { path: '/data/leads.csv', sha256: 'b'.repeat(64) },
    options,
    command: 'enrich contacts leads.csv -o out.csv',
    api,
    env,
    deadline: t + deadlineIn,
    cache,
    onWarning: (w: string) => warnings.push(w),
  });
  return { context, kept, asked, warnings };
}

describe('jobs an earlier run of the file left not downloaded', () => {
  it('are waited for, spooled into their run and kept in the cache by their echoes', async () => {
    const runsDir = await earlierRun();
    const { context, kept, warnings } = rig(5_000);
    await settleEarlierRuns(context(runsDir, 3_600_000));
    expect([...kept.keys()].sort()).toEqual([
      'contacts\u0001business_email=a@x.io',
      'contacts\u0001business_email=b@x.io',
    ]);
    expect(warnings).toEqual([
      'an earlier run of /data/leads.csv (before the file changed) left 1 job(s) not downloaded: downloading them first, so the rows they paid for are not paid for again',
    ]);
    const journal = await readFile(join(runsDir, 'old', 'journal.jsonl'), 'utf8');
    expect(journal).toMatch(/"t":"spooled","batch":"0","records":2,"credits":2,"remaining":90/);
  });

  it('still running at the deadline: the run stops before sending anything (PARTIAL, exit 3)', async () => {
    const runsDir = await earlierRun();
    const { context, kept } = rig(10_000_000);
    await expect(settleEarlierRuns(context(runsDir, 60_000))).rejects.toMatchObject({
      code: 'PARTIAL',
      exitCode: 3,
      message:
        '1 job(s) of an earlier run of /data/leads.csv are still running: nothing was sent, so the rows they paid for are not paid for again',
      hint: 'Run the same command again later: their results are downloaded first.',
    });
    expect(kept.size).toBe(0);
  });

  it('past their expiry: left alone', async () => {
    const expired = await earlierRun(500);
    const a = rig(0);
    await settleEarlierRuns(a.context(expired, 60_000));
    expect([a.asked, a.warnings]).toEqual([[], []]);
  });

  it('of the same file going on now (it grew since that run started): this run stops before sending anything (exit 2)', async () => {
    // Regression (overlapping cron runs on a grown export): the second run paid again for
    // every row the first still had in flight.
    const busy = await earlierRun();
    const release = await acquireRunLock(join(busy, 'old'), 'enrich contacts leads.csv');
    try {
      const b = rig(0);
      await expect(settleEarlierRuns(b.context(busy, 60_000))).rejects.toMatchObject({
        code: 'RUN_IN_PROGRESS',
        exitCode: 2,
        message:
          'another run in this process is running /data/leads.csv as it was before it changed, with the same options: nothing was sent, so the rows it has in flight are not paid for twice',
        hint: 'Wait for it to finish, then run again (the rows it paid for come from the results cache): enrich contacts leads.csv -o out.csv',
      });
      expect(b.asked).toEqual([]);
      // Without the cache too (--no-cache, --refresh): the rows in flight would be paid twice.
      await expect(
        settleEarlierRuns({ ...b.context(busy, 60_000), cache: undefined }),
      ).rejects.toMatchObject({ code: 'RUN_IN_PROGRESS' });
    } finally {
      await release();
    }
  });

  it('of another file (a dated export, stdin): one look, no waiting; those still running are said and left; one going on now is left to it', async () => {
    const other = (ctx: ReturnType<ReturnType<typeof rig>['context']>, path: string) => ({
      ...ctx,
      input: { path, sha256: 'b'.repeat(64) },
    });
    const done = rig(0);
    await settleEarlierRuns(other(done.context(await earlierRun(), 3_600_000), '-'));
    expect(done.asked).toEqual(['job-0']);
    expect(done.kept.size).toBe(2);
    expect(done.warnings).toEqual([
      'an earlier run of /data/leads.csv left 1 job(s) not downloaded: downloading them first, so the rows they paid for are not paid for again',
    ]);

    const runsDir = await earlierRun();
    const slow = rig(5_000);
    await settleEarlierRuns(other(slow.context(runsDir, 3_600_000), '/data/leads-28.csv'));
    expect(slow.asked).toEqual(['job-0']); // one look, not waited for
    expect(slow.warnings[1]).toBe(
      '1 job(s) of an earlier run of /data/leads.csv are still running: rows of this file they hold may be paid for again (to avoid it, wait for them to end, or run: enrich contacts leads.csv)',
    );

    const release = await acquireRunLock(join(runsDir, 'old'), 'enrich contacts leads.csv');
    try {
      const busy = rig(0);
      await settleEarlierRuns(other(busy.context(runsDir, 60_000), '/data/leads-28.csv'));
      expect([busy.asked, busy.warnings]).toEqual([[], []]);
    } finally {
      await release();
    }

    // Other request options (or another account, or service): not looked at.
    const apart = rig(0);
    const ctx = other(apart.context(runsDir, 60_000), '/data/leads-28.csv');
    await settleEarlierRuns({ ...ctx, options: { ...options, account: 'b'.repeat(32) } });
    expect(apart.asked).toEqual([]);
  });

  it('an earlier journal that cannot be opened is said, not passed over (regression: skipped without a word)', async () => {
    const runsDir = await earlierRun();
    // Its header is readable, its lock cannot be taken: a directory stands where the lock goes.
    await mkdir(join(runsDir, 'old', 'lock', 'x'), { recursive: true });
    const { context, asked, warnings } = rig(0);
    await settleEarlierRuns(context(runsDir, 60_000));
    expect(asked).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^an earlier run of \/data\/leads\.csv \(before the file changed\) cannot be opened to download the jobs it may have left \(.+\): rows it sent may be paid for again$/,
    );
  });

  it('only jobs accepted and never settled are asked for: not spooled, failed, unconfirmed, expired, split or past their expiry', async () => {
    const { runsDir, j } = await earlierJournal();
    const job = async (batch: string, expires: number | null = null) => {
      await j.append({ t: 'submit', batch, first: 0, last: 0, count: 1, idem: `i${batch}` });
      await j.append({
        t: 'accepted',
        batch,
        job: `job-${batch}`,
        url: `http://x/r/${batch}`,
        expires,
      });
    };
    await job('open');
    await job('due', 1_000); // expires at the clock's start: gone
    await job('later', 2_000_000); // expires later: asked
    await job('spooled');
    await j.append({
      t: 'spooled',
      batch: 'spooled',
      records: 1,
      credits: 1,
      remaining: 9,
      creditError: false,
    });
    await job('failed');
    await j.append({ t: 'failed', batch: 'failed', code: 'SERVER_ERROR', message: 'x' });
    await job('gone');
    await j.append({ t: 'expired', batch: 'gone' });
    await job('split');
    await j.append({ t: 'split', batch: 'split', size: 1 });
    await j.append({ t: 'submit', batch: 'sent', first: 0, last: 0, count: 1, idem: 'is' });
    await j.append({ t: 'unconfirmed', batch: 'sent', message: 'lost' });
    await j.close();
    const r = rig(0);
    await settleEarlierRuns(r.context(runsDir, 60_000));
    expect(r.asked.sort()).toEqual(['job-later', 'job-open']);
    expect(r.warnings[0]).toMatch(/ left 2 job\(s\) not downloaded/);
    // Its journal is closed again (its lock let go): it opens, and nothing is left to ask for.
    await (
      await openJournal({ runsDir, key: 'old', header: header('a'), restart: false, now: () => 2 })
    ).close();
    const again = rig(0);
    await settleEarlierRuns({ ...again.context(runsDir, 60_000), onWarning: undefined });
    expect(again.asked).toEqual([]);
  });

  it('an answer that shows the account dry is journaled so, with what it charged; results gone for good are journaled expired', async () => {
    const dry = await earlierRun();
    const out = {
      error: 'Insufficient credits',
      credit_charged: false,
      custom_fields: { [ROW_FIELD]: 1 },
      original_fields: { business_email: 'b@x.io' },
    };
    const r = rig(0, () => ({ records: [record(0, 'a@x.io'), out], remainingCredits: 0 }));
    await settleEarlierRuns(r.context(dry, 60_000));
    const journal = await readFile(join(dry, 'old', 'journal.jsonl'), 'utf8');
    expect(journal).toMatch(
      /"t":"spooled","batch":"0","records":2,"credits":1,"remaining":0,"creditError":true/,
    );
    // The shortage's answer is not kept; the good one is.
    expect([...r.kept.keys()]).toEqual(['contacts\u0001business_email=a@x.io']);

    const gone = await earlierRun();
    const notFound = rig(0);
    const api = {
      results: async () => Promise.reject(new EnrichError('API_NOT_FOUND', 'no such job')),
    } as unknown as BulkApi;
    await settleEarlierRuns({ ...notFound.context(gone, 3_600_000), api, onWarning: undefined });
    expect(await readFile(join(gone, 'old', 'journal.jsonl'), 'utf8')).toMatch(
      /"t":"expired","batch":"0"/,
    );
    expect(notFound.kept.size).toBe(0);
  });
});

/** A runs directory holding one earlier run of `path`: a job per entry, `spooled` ones downloaded. */
async function earlierRunOf(path: string, jobs: ('open' | 'spooled')[]) {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-earlier-'));
  const h = header('a');
  const j = await openJournal({
    runsDir,
    key: 'old',
    header: { ...h, input: { ...h.input, path } },
    restart: false,
    now: () => 1,
  });
  for (const [i, kind] of jobs.entries()) {
    const batch = String(i);
    await j.append({ t: 'submit', batch, first: i, last: i, count: 1, idem: `i${i}` });
    await j.append({
      t: 'accepted',
      batch,
      job: `job-${i}`,
      url: `http://x/r/${i}`,
      expires: null,
    });
    if (kind === 'spooled')
      await j.append({
        t: 'spooled',
        batch,
        records: 1,
        credits: 1,
        remaining: 9,
        creditError: false,
      });
  }
  await j.close();
  return runsDir;
}

/** Its lock cannot be taken: a directory stands where the lock goes. */
const breakLock = (runsDir: string) =>
  mkdir(join(runsDir, 'old', 'lock', 'x'), { recursive: true });

describe('batches an earlier run sent with no answer', () => {
  it('their requests are marked as sent when that run sent them (its journal’s time), and the marks committed before the rows are looked up', async () => {
    const { runsDir, j } = await earlierJournal(); // its clock reads 1
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i0' });
    await keepBatchKeys(j.dir, '0', ['s-a', 's-b']);
    await j.close(); // it died: the POST's answer never came
    const r = rig(0);
    const marks: [string, number][] = [];
    let commits = 0;
    const cache = {
      ...r.context(runsDir, 0).cache,
      markStored: (key: string, at: number) => void marks.push([key, at]),
      committed: async () => void commits++,
    };
    await settleEarlierRuns({ ...r.context(runsDir, 60_000), cache });
    expect(marks).toEqual([
      ['s-a', 1],
      ['s-b', 1],
    ]);
    expect([commits, r.asked]).toEqual([1, []]);
  });
});

describe('which earlier runs are opened', () => {
  it('a run of stdin before this run of stdin is another input: one look, not waited for', async () => {
    const runsDir = await earlierRunOf('-', ['open']);
    const r = rig(5_000);
    const ctx = r.context(runsDir, 3_600_000);
    await settleEarlierRuns({ ...ctx, input: { ...ctx.input, path: '-' } });
    expect(r.asked).toEqual(['job-0']);
    expect(r.warnings[1]).toMatch(/^1 job\(s\) of an earlier run of - are still running/);
  });

  it('a run of another file that left nothing to download is not opened (its lock is not taken)', async () => {
    const runsDir = await earlierRunOf('/data/leads-27.csv', ['spooled', 'spooled']);
    await breakLock(runsDir);
    const r = rig(0);
    await settleEarlierRuns(r.context(runsDir, 60_000));
    expect([r.asked, r.warnings]).toEqual([[], []]);
  });

  it('without the cache, a run of another file is not opened even with jobs to download', async () => {
    const runsDir = await earlierRunOf('/data/leads-27.csv', ['open']);
    await breakLock(runsDir);
    const r = rig(0);
    await settleEarlierRuns({ ...r.context(runsDir, 60_000), cache: undefined });
    expect([r.asked, r.warnings]).toEqual([[], []]);
  });

  it("without the cache, the same file's earlier run is not downloaded (nowhere to keep it)", async () => {
    const runsDir = await earlierRunOf('/data/leads.csv', ['open']);
    const r = rig(0);
    await settleEarlierRuns({ ...r.context(runsDir, 60_000), cache: undefined });
    expect([r.asked, r.warnings]).toEqual([[], []]);
  });

  it('a run of another file with one job downloaded and one not: the one left is asked for', async () => {
    const runsDir = await earlierRunOf('/data/leads-27.csv', ['spooled', 'open']);
    const r = rig(0);
    await settleEarlierRuns(r.context(runsDir, 60_000));
    expect(r.asked).toEqual(['job-1']);
  });

  it('with no warning hook: a journal that cannot be opened, or jobs still running, are passed over quietly', async () => {
    const broken = await earlierRunOf('/data/leads.csv', ['open']);
    await breakLock(broken);
    const a = rig(0);
    await settleEarlierRuns({ ...a.context(broken, 60_000), onWarning: undefined });
    expect(a.asked).toEqual([]);
    const running = await earlierRunOf('/data/leads-27.csv', ['open']);
    const b = rig(5_000);
    await settleEarlierRuns({ ...b.context(running, 60_000), onWarning: undefined });
    expect(b.asked).toEqual(['job-0']);
  });
});

describe('runningNow', () => {
  it("names another process's pid, in its message and its details", () => {
    const lock = new EnrichError('RUN_IN_PROGRESS', 'held', { details: { pid: 4242 } });
    const err = runningNow(
      { input: { path: '/data/leads.csv', sha256: '' }, command: 'enrich x' },
      lock,
    );
    expect(err).toMatchObject({
      code: 'RUN_IN_PROGRESS',
      details: { pid: 4242 },
      cause: lock,
      message:
        'another enrich process (pid 4242) is running /data/leads.csv as it was before it changed, with the same options: nothing was sent, so the rows it has in flight are not paid for twice',
    });
    const here = runningNow(
      { input: { path: '-', sha256: '' }, command: 'x' },
      new EnrichError('RUN_IN_PROGRESS', 'held'),
    );
    expect(here.details).toBeUndefined();
    expect(here.message).toMatch(/^another run in this process is running - /);
  });
});
