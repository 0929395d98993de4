import { describe, expect, it } from 'vitest';
import { jobDuration, jobProcessed, jobStart } from '../../src/sandbox/schedule.js';

describe('sandbox job schedule (capacity model)', () => {
  it('a job takes --job-ms plus --record-ms per record', () => {
    expect(jobDuration({ jobMs: 200, recordMs: 5 }, 1000)).toBe(5200);
    expect(jobDuration({ jobMs: 1000, recordMs: 0 }, 1000)).toBe(1000);
  });

  it('without a parallel limit every job starts at once', () => {
    const busy = [{ created_at: 0, ready_at: 10_000 }];
    expect(jobStart(busy, 5, 0)).toBe(5);
  });

  it('starts at once while fewer than N jobs are unfinished; finished jobs take no slot', () => {
    const jobs = [
      { created_at: 0, ready_at: 5000 },
      { created_at: 0, ready_at: 100 }, // done by now
    ];
    expect(jobStart(jobs, 1000, 2)).toBe(1000);
  });

  it('past N, a job waits for the earliest slot, first come first served, queued jobs included', () => {
    // Two slots: jobs A (0-5 s) and B (0-7 s) run; C queued after A (5-10 s).
    const jobs = [
      { created_at: 0, ready_at: 5000 },
      { created_at: 0, ready_at: 7000 },
      { created_at: 1, started_at: 5000, ready_at: 10_000 },
    ];
    // The next job takes B's slot, which frees at 7 s (A's slot is C's until 10 s).
    expect(jobStart(jobs, 2000, 2)).toBe(7000);
    // One slot: it waits behind all three.
    expect(jobStart(jobs.slice(0, 1), 2000, 1)).toBe(5000);
  });

  it('progress is 0 while a job waits for its slot, then grows to the total', () => {
    const job = { created_at: 0, started_at: 5000, ready_at: 10_000, total: 1000 };
    expect(jobProcessed(job, 4000)).toBe(0);
    expect(jobProcessed(job, 7500)).toBe(500);
    expect(jobProcessed(job, 10_000)).toBe(1000);
    expect(jobProcessed({ created_at: 0, ready_at: 4000, total: 2 }, 2500)).toBe(1);
  });
});
