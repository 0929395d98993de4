import { describe, expect, it } from 'vitest';
import {
  decideInFlight,
  initialFlight,
  queuedJobs,
  runningJobs,
  type FlightJob,
  type FlightState,
} from '../../src/pipeline/run/in-flight.js';
import { createFlightGate, windowRows } from '../../src/pipeline/run/flight-gate.js';
import { limits, view } from '../helpers/flight-view.js';

const state = (target: number, changedAt = 0): FlightState => ({
  target,
  changedAt,
  throttledSeen: 0,
});
/** n jobs accepted at `at`, due `ms` later. */
const jobs = (n: number, at: number, ms?: number): FlightJob[] =>
  Array.from({ length: n }, () =>
    ms === undefined ? { acceptedAt: at } : { acceptedAt: at, dueAt: at + ms },
  );

describe('decideInFlight: jobs in flight that follow the service', () => {
  it('starts at 4 jobs, within the cap', () => {
    expect(initialFlight(0).target).toBe(4);
    expect(initialFlight(0, 2).target).toBe(2);
  });

  it('doubles while every job runs side by side and the jobs are the wait', () => {
    const v = view({ now: 600, jobs: jobs(4, 0, 5000) });
    expect(decideInFlight(state(4), v, limits)).toMatchObject({ target: 8, changedAt: 600 });
  });

  it('does not grow within a probe interval of the last change, unless the service says more run', () => {
    // Four said to run, four not polled yet: the service has confirmed one round of four.
    const v = view({ now: 600, jobs: [...jobs(4, 0, 5000), ...jobs(4, 500)] });
    expect(decideInFlight(state(8, 300), v, limits).target).toBe(8);
  });

  it('doubles as soon as the 202s say a round runs side by side (slow start, no probe wait)', () => {
    // 50 ms after the first four were accepted, their first 202s say each is due in 5 s.
    expect(
      decideInFlight(state(4, 0), view({ now: 50, jobs: jobs(4, 0, 5000) }), limits),
    ).toMatchObject({ target: 8, changedAt: 50 });
    // The next four say the same 100 ms later: 16, with no probe interval in between.
    const eight = view({ now: 150, jobs: [...jobs(4, 0, 5000), ...jobs(4, 120, 5000)] });
    expect(decideInFlight(state(8, 50), eight, limits).target).toBe(16);
    expect(runningJobs(eight, 5000)).toBe(8);
  });

  it('counts as running only the jobs due about one job-time after their acceptance', () => {
    // Two slots: two due in 5 s, two queued behind them (due in 10 s).
    const v = view({ now: 50, jobs: [...jobs(2, 0, 5000), ...jobs(2, 0, 10_000)] });
    expect(runningJobs(v, 5000)).toBe(2);
    const resumed = view({ now: 50, jobs: [{ acceptedAt: 0, dueAt: 5000, resumed: true }] });
    expect(runningJobs(resumed, 5000)).toBe(0);
  });

  it('before any job time is known (no Retry-After, no job done), every job accepted makes room for one more', () => {
    // api-spec.md promises no Retry-After: a service may say nothing until a job ends, and
    // waiting for that end with 4 in flight costs a whole job-time.
    expect(decideInFlight(state(4), view({ now: 60, jobs: jobs(3, 50) }), limits)).toMatchObject({
      target: 6,
      changedAt: 60,
    });
    expect(decideInFlight(state(8), view({ now: 60, jobs: jobs(4, 50) }), limits).target).toBe(8);
    expect(decideInFlight(state(8), view({ now: 60, jobs: jobs(5, 50) }), limits).target).toBe(10);
    expect(decideInFlight(state(32), view({ now: 60, jobs: jobs(20, 50) }), limits).target).toBe(
      32,
    );
    expect(decideInFlight(state(16), view({ now: 60, jobs: jobs(32, 50) }), limits).target).toBe(
      32,
    );
    // Not clocked by time: four accepted 2 s ago and nothing since, still 8.
    expect(decideInFlight(state(8), view({ now: 2000, jobs: jobs(4, 0) }), limits).target).toBe(8);
    // Resumed jobs were accepted by another run: no room from them.
    const resumed = Array.from({ length: 8 }, () => ({ acceptedAt: 0, resumed: true }));
    expect(decideInFlight(state(4), view({ now: 60, jobs: resumed }), limits).target).toBe(4);
  });

  it('slow start ends at the first 429: the halving holds', () => {
    const v = view({ now: 60, jobs: jobs(16, 50), throttled: 1 });
    const halved = decideInFlight(state(32), v, limits);
    expect(halved).toMatchObject({ target: 16, throttledSeen: 1 });
    expect(decideInFlight(halved, { ...v, now: 5000 }, limits).target).toBe(16);
    // Likewise when the 202s say the jobs run (Retry-After): no doubling after a 429.
    const said = view({ now: 600, jobs: jobs(8, 0, 5000), throttled: 1 });
    const s8 = { ...state(4, 550), throttledSeen: 1 };
    expect(decideInFlight(s8, said, limits).target).toBe(4);
    expect(decideInFlight(s8, { ...said, throttled: 0 }, limits).target).toBe(16);
  });

  it('does not grow when the reader does not fill the target', () => {
    expect(
      decideInFlight(state(8), view({ now: 600, jobs: jobs(3, 0, 5000) }), limits).target,
    ).toBe(8);
  });

  it('grows against a fast service too while the reader waits for places (round trips are the wait)', () => {
    // Jobs of 300 ms: the reader, held at 4 places, waits for each job's POST and download
    // round trips (measured at 100k rows, jobs of 0 ms: 7.6 s with 4 in flight, 6.6 s with 16).
    const fast = view({ now: 600, jobs: jobs(4, 400, 300) });
    expect(decideInFlight(state(4), fast, limits).target).toBe(8);
    expect(decideInFlight(state(4, 300), fast, limits).target).toBe(4); // within a probe interval
  });

  it('a service that gives no due times is probed once per 1.5 job-times (it shows a queue no sooner)', () => {
    // Jobs of 1 s, none said due: four young jobs in flight, the reader waiting.
    const at = (now: number) =>
      view({ now, jobs: jobs(4, now - 100), fastestDoneMs: 1000, throttled: 0 });
    expect(decideInFlight(state(4), at(1499), limits).target).toBe(4);
    expect(decideInFlight(state(4), at(1500), limits)).toMatchObject({
      target: 8,
      changedAt: 1500,
    });
    // Fast jobs: the half-second probe still holds.
    const fast = (now: number) => view({ now, jobs: jobs(4, now - 10), fastestDoneMs: 100 });
    expect(decideInFlight(state(4), fast(499), limits).target).toBe(4);
    expect(decideInFlight(state(4), fast(500), limits).target).toBe(8);
    // One job said due: the service's answers show a queue at once, so half a second.
    const said = view({ now: 600, jobs: [...jobs(3, 500), { acceptedAt: 500, dueAt: 1500 }] });
    expect(decideInFlight(state(4, 0), { ...said, fastestDoneMs: 1000 }, limits).target).toBe(8);
  });

  it('never passes the cap', () => {
    const v = view({ now: 600, jobs: jobs(32, 0, 5000) });
    expect(decideInFlight(state(32), v, limits).target).toBe(32);
    expect(
      decideInFlight(state(20), view({ now: 600, jobs: jobs(20, 0, 5000) }), limits).target,
    ).toBe(32);
  });

  it('when jobs only queue, keeps what the service runs and a round queued behind it', () => {
    // 16 in flight; the service said 8 are due in 5 s and 8 in 10 s (a queue of 8).
    const v = view({ now: 1000, jobs: [...jobs(8, 900, 5000), ...jobs(8, 900, 10_000)] });
    expect(queuedJobs(v, 5000)).toBe(8);
    expect(decideInFlight(state(32), v, limits).target).toBe(16);
  });

  it('two slots: keeps four in flight, so the service never idles between jobs', () => {
    const v = view({ now: 100, jobs: [...jobs(2, 50, 5000), ...jobs(4, 50, 10_000)] });
    expect(decideInFlight(state(8), v, limits).target).toBe(4);
  });

  it('without due times, jobs in flight 1.5 job-times are taken as queued', () => {
    const v = view({ now: 20_000, jobs: [...jobs(2, 16_000), ...jobs(6, 0)], fastestDoneMs: 5000 });
    expect(decideInFlight(state(8), v, limits).target).toBe(4);
  });

  it('halves on a new 429, once per 429 seen', () => {
    const v = view({ now: 100, jobs: jobs(8, 0), throttled: 1 });
    const next = decideInFlight(state(8), v, limits);
    expect(next).toMatchObject({ target: 4, throttledSeen: 1 });
    expect(decideInFlight(next, { ...v, now: 200 }, limits).target).toBe(4);
    expect(decideInFlight(state(1), v, limits).target).toBe(1);
  });

  it('a resumed job says nothing of job time', () => {
    const v = view({
      now: 600,
      jobs: [{ acceptedAt: 0, dueAt: 100, resumed: true }, ...jobs(3, 0)],
    });
    // Taken as a job time of 100 ms, the three others (600 ms in flight) would be queued: 2.
    // Not taken, no job time is known: slow start by the three this run had accepted.
    expect(decideInFlight(state(4, 300), v, limits).target).toBe(6);
  });
});

describe('createFlightGate', () => {
  it('fixed: at most N batches in flight, the next one starts when one ends', async () => {
    const gate = createFlightGate({ fixed: 2, cap: 32, now: () => 0 });
    const r1 = await gate.acquire();
    await gate.acquire();
    let third = false;
    const p = gate.acquire().then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    r1();
    r1(); // a second release of the same place is ignored
    await p;
    expect(third).toBe(true);
    expect(gate.target()).toBe(2);
  });

  it('adaptive: grows as the service says jobs run side by side, holds once they queue', async () => {
    let t = 0;
    const probes: number[] = [];
    const gate = createFlightGate({
      cap: 32,
      now: () => t,
      wait: async (ms) => {
        probes.push(ms);
        t += ms;
      },
    });
    const start = async (id: string, dueIn: number) => {
      await gate.acquire();
      gate.accepted(id);
      gate.pending(id, dueIn);
    };
    for (let i = 0; i < 4; i++) await start(`b${i}`, 5000);
    // The service said the four it was sent run: room for two per job said to run.
    expect(gate.target()).toBe(8);
    await start('b4', 5000);
    await start('b5', 5000); // six said to run: twelve
    expect(probes).toEqual([]); // no probe interval waited
    expect(gate.target()).toBe(12);
    await start('b6', 10_000 - t); // due at 10 s: queued behind the first six
    expect(gate.target()).toBe(12); // the six it runs, and a round queued behind them
    t = 1500; // past a probe interval, but a queue was seen: no growth
    gate.pending('b0', 3500);
    expect(gate.target()).toBe(12);
    t = 5000; // the first six done: the queued job runs; still within a job-time of the queue
    for (let i = 0; i < 6; i++) gate.ended(`b${i}`, true);
    expect(gate.target()).toBe(12);
  });

  it('adaptive: no growth within a job-time of a queue seen', () => {
    const v = view({ now: 3000, jobs: jobs(5, 2000, 5000) });
    expect(decideInFlight({ ...state(5), queueSeenAt: 500 }, v, limits).target).toBe(5);
    expect(
      decideInFlight({ ...state(5), queueSeenAt: 500 }, { ...v, now: 6000 }, limits).target,
    ).toBe(10);
  });

  it('the join window follows the jobs in flight, from 4,096 to 32,768 rows', () => {
    expect(windowRows(4, 1000)).toBe(6000);
    expect(windowRows(1, 5)).toBe(4096);
    expect(windowRows(32, 1000)).toBe(32_768);
  });
});
