import type { BulkApi } from '../types.js';
import { createJobTimes, type JobTimes } from './job-times.js';
import {
  decideInFlight,
  IN_FLIGHT_CAP,
  initialFlight,
  PROBE_MS,
  type FlightJob,
  type FlightState,
} from './in-flight.js';

/** What the batches tell the gate about their jobs (keyed by spool id: parts and retries too). */
export interface FlightWatch {
  /**
   * The service accepted the job of `records` records, or (`resumed`) a resumed run took it
   * over, started earlier.
   */
  accepted(id: string, resumed?: boolean, records?: number): void;
  /** A 202: still running; `retryAfterMs` when the service said how long. */
  pending(id: string, retryAfterMs: number | undefined): void;
  /** The job left flight: its results came (`done`), or it timed out, expired or failed. */
  ended(id: string, done: boolean): void;
  /** How long this run's jobs took from acceptance to results, by size, and its changes. */
  jobTimes: Pick<JobTimes, 'fastest' | 'watch'>;
}

/** Bounds the batches in flight: a fixed number, or one that follows the service (in-flight.ts). */
export interface FlightGate extends FlightWatch {
  /** Waits until one more batch may start; call the returned function when it has ended. */
  acquire(): Promise<() => void>;
  /** Jobs the gate allows in flight now. */
  target(): number;
}

export interface FlightGateOptions {
  /** A fixed number of batches in flight (`--concurrency`); absent: adaptive, up to `cap`. */
  fixed?: number;
  cap: number;
  now(): number;
  /** 429s the service has answered so far (absent: none are seen). */
  throttled?: () => number;
  /** Waits `ms` of real time to look again (the probe timer); injected by tests. */
  wait?: (ms: number) => Promise<void>;
}

const realWait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/** Creates the gate of a run's batches. */
export function createFlightGate(o: FlightGateOptions): FlightGate {
  const jobs = new Map<string, FlightJob>();
  const waiters: (() => void)[] = [];
  let held = 0;
  const times = createJobTimes();
  let state: FlightState = initialFlight(o.now(), o.cap);
  const wait = o.wait ?? realWait;

  const decide = () => {
    if (o.fixed !== undefined) return;
    const inFlight = [...jobs.values()];
    // The job time of jobs as large as the largest in flight (a small job's says little of them).
    const largest = Math.max(0, ...inFlight.map((j) => j.records ?? 0));
    const fastestDoneMs = times.fastest(largest);
    const view = {
      now: o.now(),
      jobs: inFlight,
      inFlight: held,
      throttled: o.throttled?.() ?? 0,
      ...(fastestDoneMs !== undefined ? { fastestDoneMs } : {}),
    };
    state = decideInFlight(state, view, { cap: o.cap, probeMs: PROBE_MS });
  };
  const target = () => o.fixed ?? state.target;
  const wake = () => {
    decide();
    while (waiters.length > 0 && held < target()) (waiters.shift() as () => void)();
  };
  const release = () => {
    held--;
    wake();
  };

  return {
    target,
    async acquire() {
      decide();
      while (held >= target()) {
        let wakeMe = () => {};
        const woken = new Promise<void>((resolve) => waiters.push((wakeMe = resolve)));
        // Adaptive: look again after a probe interval (the target may grow with time alone).
        await (o.fixed === undefined ? Promise.race([woken, wait(PROBE_MS)]) : woken);
        const at = waiters.indexOf(wakeMe);
        if (at >= 0) waiters.splice(at, 1);
        decide();
      }
      held++;
      let once = false;
      return () => {
        if (!once) release();
        once = true;
      };
    },
    accepted(id, resumed, records) {
      jobs.set(id, {
        acceptedAt: o.now(),
        ...(resumed ? { resumed } : {}),
        ...(records !== undefined ? { records } : {}),
      });
      wake();
    },
    pending(id, retryAfterMs) {
      const job = jobs.get(id);
      if (!job) return;
      if (retryAfterMs !== undefined) job.dueAt = o.now() + retryAfterMs;
      wake();
    },
    ended(id, done) {
      const job = jobs.get(id);
      jobs.delete(id);
      if (job && done && !job.resumed) times.add(job.records ?? 0, o.now() - job.acceptedAt);
      wake();
    },
    jobTimes: times,
  };
}

/** HTTP requests in flight at most (polls of many jobs are short; a POST may be long). */
export const REQUESTS_IN_FLIGHT = 8;

/** The gate of a run's jobs: `concurrency` (`--concurrency`) fixed, else adaptive up to the cap. */
export function flightGate(
  concurrency: number | undefined,
  now: () => number,
  api: Pick<BulkApi, 'throttled'>,
): FlightGate {
  const throttled = api.throttled?.bind(api);
  return createFlightGate({
    ...(concurrency !== undefined ? { fixed: concurrency } : {}),
    cap: IN_FLIGHT_CAP,
    now,
    ...(throttled ? { throttled } : {}),
  });
}

/**
 * Rows the one-pass join holds at most: the batches in flight plus two being filled, from
 * 4,096 (small batches) to 32,768 (memory). Past it, a slow head job makes the join spill.
 */
export function windowRows(jobsInFlight: number, batchSize: number): number {
  return Math.min(32_768, Math.max(4096, (jobsInFlight + 2) * batchSize));
}
