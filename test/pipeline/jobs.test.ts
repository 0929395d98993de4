import { describe, expect, it } from 'vitest';
import type { BatchState, JournaledRun } from '../../src/pipeline/journal/journal.js';
import { jobsOfRun } from '../../src/pipeline/journal/jobs.js';

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
