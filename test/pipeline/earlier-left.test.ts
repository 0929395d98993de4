import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepBatchKeys } from '../../src/pipeline/journal/batch-keys.js';
import { openJournal } from '../../src/pipeline/journal/journal.js';
import { earlierLeft, withEarlierLeft } from '../../src/pipeline/run/earlier-left.js';
import { ROW_CLAIMS_DIR } from '../../src/pipeline/run/row-claims.js';
import type { CachedAnswer, ResultsCache } from '../../src/pipeline/types.js';

// What earlier runs leave to a new run's start, as its dry run reads it (earlier-left.ts): the
// requests of their jobs not downloaded, and of their batches sent with no answer.

const options = { service: 'http://127.0.0.1:1', account: 'a1', metadata: {} };

/** An earlier run `key` of `path` under `runsDir`, open (its lock held). */
function earlierRun(runsDir: string, key: string, path: string, opts = options) {
  return openJournal({
    runsDir,
    key,
    header: {
      kind: 'contacts',
      input: { path, size: 10, sha256: key.padEnd(64, '0') },
      options: opts,
      command: `enrich contacts ${path}`,
    },
    restart: false,
    now: () => 1,
  });
}

describe('earlierLeft', () => {
  it('takes the keys of jobs not downloaded and of batches sent with no answer, of runs no process holds, with the same options', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-left-'));
    const j = await earlierRun(runsDir, 'day1', '/data/day1.csv');
    const submit = (batch: string) =>
      j.append({ t: 'submit', batch, first: 0, last: 0, count: 1, idem: `i${batch}` });
    const accept = (batch: string, expires: number | null) =>
      j.append({ t: 'accepted', batch, job: `job-${batch}`, url: `http://x/${batch}`, expires });
    for (const b of ['0', '1', '2', '3', '4']) {
      await submit(b);
      await keepBatchKeys(j.dir, b, [`k${b}`]);
    }
    await accept('0', null); // a job not downloaded
    await accept('1', 500); // expired by now (1000)
    await accept('2', null);
    await j.append({
      t: 'spooled',
      batch: '2',
      records: 1,
      credits: 1,
      remaining: 9,
      creditError: false,
    }); // downloaded
    // '3': submitted and never answered (the run died); '4': refused, nothing processed.
    await j.append({ t: 'failed', batch: '4', code: 'API_VALIDATION', message: 'no' });
    const other = await earlierRun(runsDir, 'other', '/data/x.csv', { ...options, account: 'a2' });
    await other.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'x' });
    await keepBatchKeys(other.dir, '0', ['other-account']);
    await other.close();

    const c = {
      runsDir,
      key: 'day2',
      kind: 'contacts',
      options,
      input: { path: '/data/day2.csv' },
      now: 1_000,
    };
    // Held by a live run (this process): left to it.
    expect(await earlierLeft(c)).toEqual({ inJobs: new Set(), unanswered: new Map() });
    await j.close();
    const left = await earlierLeft(c);
    // A lost request with when it was sent (the journal's clock reads 1): its mark's time.
    expect(left).toEqual({ inJobs: new Set(['k0']), unanswered: new Map([['k3', 1]]) });
    // Past the budget, other files' runs are left; the same file's (before it changed) never.
    expect(await earlierLeft({ ...c, budgetMs: -1 })).toEqual({
      inJobs: new Set(),
      unanswered: new Map(),
    });
    expect(await earlierLeft({ ...c, budgetMs: -1, input: { path: '/data/day1.csv' } })).toEqual(
      left,
    );
    // Standard input is never "the same file" as another run's standard input.
    const none = { inJobs: new Set(), unanswered: new Map() };
    const j2 = await earlierRun(runsDir, 'stdin', '-');
    await j2.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'x' });
    await keepBatchKeys(j2.dir, '0', ['from-stdin']);
    await j2.close();
    expect(await earlierLeft({ ...c, budgetMs: -1, input: { path: '-' } })).toEqual(none);
  });

  it('takes the keys of jobs not downloaded of a run that ended holding rows (its marker), whatever its options', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-left-'));
    const other = { ...options, metadata: { mapping: 'Email Address' } };
    const j = await earlierRun(runsDir, 'r27', '/data/d27.csv', other);
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i0' });
    await keepBatchKeys(j.dir, '0', ['k27']);
    await j.append({ t: 'accepted', batch: '0', job: 'job-0', url: 'http://x/0', expires: null });
    await j.close();
    const c = {
      runsDir,
      key: 'r28',
      kind: 'contacts',
      options,
      input: { path: '/data/d28.csv' },
      now: 1_000,
    };
    // Other options, and no marker: not this run's to settle.
    expect(await earlierLeft(c)).toEqual({ inJobs: new Set(), unanswered: new Map() });
    await mkdir(join(runsDir, ROW_CLAIMS_DIR));
    await writeFile(join(runsDir, ROW_CLAIMS_DIR, 'r27.ended'), '1\n');
    expect(await earlierLeft(c)).toEqual({ inJobs: new Set(['k27']), unanswered: new Map() });
    // Its own marker is no other run's (a resume of it).
    expect((await earlierLeft({ ...c, key: 'r27' })).inJobs).toEqual(new Set());
  });

  it('the view answers a job’s request as fresh (told apart), and a lost one as a mark (over an older answer too)', () => {
    const stored = new Map<string, CachedAnswer>([
      ['k-answered', { records: [{ n: 1 }], at: 5, charged: true }],
      ['k-later', { records: [{ n: 3 }], at: 850, charged: true }],
      ['k-job', { records: [{ n: 2 }], at: 5, charged: true }],
    ]);
    const cache: ResultsCache = {
      get: (k) => stored.get(`k-${k}`),
      put: () => undefined,
      claimKey: (k) => `k-${k}`,
    };
    const left = {
      inJobs: new Set(['k-job']),
      unanswered: new Map([
        ['k-lost', 800],
        ['k-answered', 800],
        ['k-later', 800],
      ]),
    };
    const { cache: view, inJob } = withEarlierLeft(cache, left, 900);
    const job = view.get('job')!;
    expect(job).toEqual({ records: [], at: 900, charged: false });
    expect(inJob(job)).toBe(true);
    // Marked when it was sent, as the run's start marks it.
    expect(view.get('lost')).toEqual({ records: [], at: 800, charged: false, unconfirmed: true });
    // An answer older than the lost request keeps the mark over it; one that came after, none.
    expect(view.get('answered')).toEqual({ ...stored.get('k-answered'), unansweredAt: 800 });
    expect(view.get('later')).toBe(stored.get('k-later'));
    expect(inJob(view.get('answered')!)).toBe(false);
    expect(view.get('new')).toBeUndefined();

    // A cache that names no store keys: read as it is.
    const plain: ResultsCache = { get: (k) => stored.get(`k-${k}`), put: () => undefined };
    const same = withEarlierLeft(plain, left, 900);
    expect(same.cache).toBe(plain);
    expect(same.cache.get('job')).toBe(stored.get('k-job'));
    expect(same.inJob(same.cache.get('job')!)).toBe(false);
  });
});
