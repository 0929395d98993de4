import { describe, expect, it } from 'vitest';
import {
  decideInFlight,
  jobTime,
  queuedJobs,
  runningJobs,
  type FlightJob,
  type FlightState,
} from '../../src/pipeline/run/in-flight.js';
import { limits, view } from '../helpers/flight-view.js';

// The jobs-in-flight policy at its edges (issue 21: mutants of in-flight.ts that no test saw):
// which job times count, where "queued" and "running" begin, and when the target may move.

const state = (target: number, o: Partial<FlightState> = {}): FlightState => ({
  target,
  changedAt: 0,
  throttledSeen: 0,
  ...o,
});
const job = (acceptedAt: number, dueAt?: number, resumed = false): FlightJob => ({
  acceptedAt,
  ...(dueAt === undefined ? {} : { dueAt }),
  ...(resumed ? { resumed } : {}),
});

describe('jobTime: the shortest job time the service has shown', () => {
  it('is the shortest due time of the jobs in flight, whatever their order', () => {
    const v = view({ jobs: [job(0, 3000), job(100, 1100), job(200, 2200)] });
    expect(jobTime(v)).toBe(1000);
  });

  it('is a job done sooner when there is one', () => {
    expect(jobTime(view({ fastestDoneMs: 400, jobs: [job(0, 1000)] }))).toBe(400);
    expect(jobTime(view({ fastestDoneMs: 4000, jobs: [job(0, 1000)] }))).toBe(1000);
  });

  it('ignores a due time not after the acceptance, a job without one, and a resumed job', () => {
    expect(jobTime(view({ jobs: [job(500, 500), job(500, 400)] }))).toBeUndefined();
    expect(jobTime(view({ jobs: [job(0)] }))).toBeUndefined();
    expect(jobTime(view({ jobs: [job(0, 700, true)] }))).toBeUndefined();
  });
});

describe('queuedJobs and runningJobs: where each begins (job time 4 s)', () => {
  const base = 4000; // 1.25 job-times + Retry-After's rounding: 6 s; 1.5 job-times: 6 s
  it('a job due more than 6 s from now is queued; due exactly 6 s away, it is not', () => {
    expect(queuedJobs(view({ now: 1000, jobs: [job(0, 7000)] }), base)).toBe(0);
    expect(queuedJobs(view({ now: 1000, jobs: [job(0, 7001)] }), base)).toBe(1);
  });

  it('a job with no due time is queued after more than 6 s in flight; at exactly 6 s, it is not', () => {
    expect(queuedJobs(view({ now: 7000, jobs: [job(1000)] }), base)).toBe(0);
    expect(queuedJobs(view({ now: 7001, jobs: [job(1000)] }), base)).toBe(1);
  });

  it('a job due at most 6 s after its acceptance runs; later, or resumed, or without a due time, it does not', () => {
    expect(runningJobs(view({ jobs: [job(5000, 11000)] }), base)).toBe(1); // exactly 6 s
    expect(runningJobs(view({ jobs: [job(5000, 10500)] }), base)).toBe(1); // 5.5 s
    expect(runningJobs(view({ jobs: [job(5000, 11001)] }), base)).toBe(0);
    expect(runningJobs(view({ jobs: [job(5000, 9000, true)] }), base)).toBe(0);
    expect(runningJobs(view({ jobs: [job(5000)] }), base)).toBe(0);
  });
});

describe('decideInFlight at its edges', () => {
  it('keeps the time of the last change while the target holds', () => {
    const held = decideInFlight(
      state(8, { changedAt: 100 }),
      view({ now: 900, jobs: [job(0)] }),
      limits,
    );
    expect(held).toMatchObject({ target: 8, changedAt: 100 });
  });

  it('notes when it saw jobs queue', () => {
    // Two run (due in 4 s), two queued behind them (due in 8 s): seen at 300.
    const v = view({ now: 300, jobs: [job(0, 4000), job(0, 4000), job(0, 8000), job(0, 8000)] });
    expect(decideInFlight(state(8), v, limits)).toMatchObject({ target: 4, queueSeenAt: 300 });
  });

  it('grows again once a job-time has passed since the queue was seen, not before', () => {
    // Job time 1 s (a job done in 1 s); four in flight for 600 ms, the reader waiting.
    const v = (now: number) =>
      view({ now, fastestDoneMs: 1000, jobs: [0, 0, 0, 0].map(() => job(now - 600)) });
    const seen = (at: number) => state(4, { changedAt: 0, queueSeenAt: at });
    expect(decideInFlight(seen(9001), v(10_000), limits).target).toBe(4); // 999 ms ago
    expect(decideInFlight(seen(9000), v(10_000), limits).target).toBe(8); // a job-time ago
  });

  it('slow start from a job time of exactly one probe interval', () => {
    // Jobs of 500 ms: the 202s of four say they run; the target doubles to 8 at once.
    const v = view({ now: 50, jobs: [0, 0, 0, 0].map(() => job(0, 500)) });
    expect(decideInFlight(state(4, { changedAt: 40 }), v, limits).target).toBe(8);
  });

  it('doubles on the probe clock when the service has confirmed exactly half the target', () => {
    // Eight in flight, four said to run: slow start gives nothing more; a probe interval has
    // passed with the reader waiting, so it doubles.
    const v = view({
      now: 1000,
      jobs: [...[0, 0, 0, 0].map(() => job(0, 5000)), ...[0, 0, 0, 0].map(() => job(900))],
    });
    expect(decideInFlight(state(8, { changedAt: 500 }), v, limits).target).toBe(16);
  });

  it('doubles on the probe clock exactly one probe interval after the last change', () => {
    const v = (now: number) =>
      view({ now, fastestDoneMs: 100, jobs: [0, 0, 0, 0].map(() => job(now - 50)) });
    expect(decideInFlight(state(4, { changedAt: 1000 }), v(1499), limits).target).toBe(4);
    expect(decideInFlight(state(4, { changedAt: 1000 }), v(1500), limits).target).toBe(8);
  });
});
