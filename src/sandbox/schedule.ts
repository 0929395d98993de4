import type { Job } from './store.js';

/** A job's place on the account's timeline: when it started (or will) and when it is done. */
export type Slot = Pick<Job, 'created_at' | 'ready_at'> & { started_at?: number };

/** How long a job of `records` input records takes to process (the service's own work). */
export function jobDuration(o: { jobMs: number; recordMs: number }, records: number): number {
  return o.jobMs + o.recordMs * records;
}

/**
 * When a job submitted at `now` starts, on an account that processes at most `parallel`
 * jobs at once (0: no limit) first come, first served: at once while fewer than `parallel`
 * of its `active` jobs (unexpired, any state) are unfinished, else when the earliest of
 * the slots frees. Replays the unfinished jobs in the order they started, each taking the
 * slot that freed first, so the answer depends only on the stored jobs (a restart of a
 * `--state` sandbox schedules alike).
 */
export function jobStart(active: Iterable<Slot>, now: number, parallel: number): number {
  if (parallel <= 0) return now;
  const busy: Slot[] = [];
  for (const j of active) if (j.ready_at > now) busy.push(j);
  if (busy.length < parallel) return now;
  busy.sort((a, b) => startOf(a) - startOf(b));
  // Free moments of the `parallel` slots; each unfinished job in turn takes the earliest.
  const free: number[] = new Array<number>(parallel).fill(now);
  for (const j of busy) {
    const k = earliest(free);
    free[k] = Math.max(free[k] as number, j.ready_at);
  }
  return Math.max(now, free[earliest(free)] as number);
}

const startOf = (j: Slot) => j.started_at ?? j.created_at;

function earliest(free: readonly number[]): number {
  let k = 0;
  for (let i = 1; i < free.length; i++) if ((free[i] as number) < (free[k] as number)) k = i;
  return k;
}

/** How many of a job's records are done at `now` (0 while it waits for a slot). */
export function jobProcessed(job: Slot & { total: number }, now: number): number {
  const start = startOf(job);
  if (now <= start) return 0;
  const span = Math.max(1, job.ready_at - start);
  return Math.min(job.total, Math.floor((job.total * (now - start)) / span));
}
