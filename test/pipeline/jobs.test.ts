import { describe, expect, it } from 'vitest';
import type { BatchState, JournaledRun } from '../../src/pipeline/journal/journal.js';
import {
  filterJobs,
  groupByRun,
  jobsOfRun,
  matchJob,
  type JobInfo,
} from '../../src/pipeline/journal/jobs.js';

const run = (batches: BatchState[]): JournaledRun => ({
  key: 'k',
  dir: '/runs/k',
  modifiedAt: 0,
  state: {
    header: {
      t: 'run',
      v: 1,
      run: 'k',
      nonce: 'n',
      kind: 'contacts',
      input: { path: '/in.csv', size: 1, sha256: 'ab' },
      options: {},
      command: 'enrich contacts in.csv',
      at: 0,
    },
    batches: new Map(batches.map((b) => [b.id, b])),
  },
});

const batch = (id: string, extra: Partial<BatchState>): BatchState => ({
  id,
  first: 0,
  last: 9,
  count: 10,
  idem: `i${id}`,
  ...extra,
});

describe('jobsOfRun', () => {
  it('tells each job as it stands now: a job not downloaded by its expiry is expired, not running', () => {
    const jobs = jobsOfRun(
      run([
        batch('0', { job: 'j0', expires: 5_000 }),
        batch('1', { job: 'j1', expires: 20_000 }),
        batch('2', { job: 'j2', expires: null }),
        batch('3', {
          job: 'j3',
          expires: 1_000,
          spooled: { records: 10, credits: 10, remaining: 5, creditError: false },
        }),
        batch('4', {}),
      ]),
      10_000,
    );
    expect(jobs.map((j) => [j.batch, j.status])).toEqual([
      ['0', 'expired'],
      ['1', 'running'],
      ['2', 'running'],
      ['3', 'done'],
      ['4', 'submitting'],
    ]);
  });
});

describe('groupByRun (enrich jobs list)', () => {
  const job = (run: string, status: JobInfo['status']): JobInfo => ({
    job_id: `${run}-${status}`,
    run,
    batch: '0',
    kind: 'contacts',
    input: `/in-${run}.csv`,
    rows: 10,
    status,
    started_at: '2026-11-24T10:00:00.000Z',
    expires_at: null,
    credits_charged: null,
    error: null,
    command: 'enrich contacts',
    metadata: null,
  });
  const jobs = [job('c', 'done'), job('c', 'unconfirmed'), job('b', 'done'), job('a', 'running')];

  it('keeps the runs in order (newest first) with their jobs and counts per status', () => {
    const { runs, hidden } = groupByRun(jobs);
    expect(hidden).toBe(0);
    expect(runs.map((r) => [r.run, r.jobs.length, r.statuses])).toEqual([
      ['c', 2, { done: 1, unconfirmed: 1 }],
      ['b', 1, { done: 1 }],
      ['a', 1, { running: 1 }],
    ]);
  });

  it('shows the newest `limit` runs and counts the rest', () => {
    const { runs, hidden } = groupByRun(jobs, 2);
    expect(runs.map((r) => r.run)).toEqual(['c', 'b']);
    expect(hidden).toBe(1);
  });
});

describe('matchJob (enrich jobs show / fetch <id>)', () => {
  const jobs = jobsOfRun(
    run([batch('0', { job: 'ab12cd34-1' }), batch('1', { job: 'ab12ef56-2' }), batch('2', {})]),
  );

  it('finds a job by its full id or a unique prefix of at least 4 characters', () => {
    expect(matchJob(jobs, 'ab12cd34-1').found?.batch).toBe('0');
    expect(matchJob(jobs, 'ab12e').found?.batch).toBe('1');
  });

  it('tells a prefix too short, one matching several jobs, and no match apart', () => {
    expect(matchJob(jobs, 'ab1')).toEqual({ why: 'too-short' });
    expect(matchJob(jobs, 'ab12')).toEqual({
      why: 'ambiguous',
      matches: ['ab12cd34-1', 'ab12ef56-2'],
    });
    expect(matchJob(jobs, 'ffff')).toEqual({ why: 'none' });
  });

  it('finds a job by an id or prefix pasted upper-cased or with spaces around it (a UUID has no case)', () => {
    expect(matchJob(jobs, 'AB12CD34-1').found?.job_id).toBe('ab12cd34-1');
    expect(matchJob(jobs, ' ab12cd34-1\n').found?.job_id).toBe('ab12cd34-1');
    expect(matchJob(jobs, 'AB12E').found?.batch).toBe('1');
    expect(matchJob(jobs, ' ab1 ')).toEqual({ why: 'too-short' });
  });
});

describe('filterJobs (enrich jobs list --input / --status)', () => {
  it('keeps the jobs of one input and/or one status', () => {
    const jobs = jobsOfRun(
      run([
        batch('0', { job: 'j0', expires: null }),
        batch('1', { failed: { code: 'X', message: 'm' } }),
      ]),
    );
    expect(filterJobs(jobs, { status: 'failed' }).map((j) => j.batch)).toEqual(['1']);
    expect(filterJobs(jobs, { input: '/in.csv', status: 'running' }).map((j) => j.batch)).toEqual([
      '0',
    ]);
    expect(filterJobs(jobs, { input: '/other.csv' })).toEqual([]);
    expect(filterJobs(jobs, {})).toHaveLength(2);
  });
});
