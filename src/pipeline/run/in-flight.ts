/**
 * How many bulk jobs a run keeps in flight, decided from what the service shows of its
 * capacity: how long its jobs take (or say they will take, in a 202's Retry-After) as more
 * are added, and its 429s. A pure function of a snapshot, so it is tested without a service.
 *
 * The idea is TCP's congestion window with Vegas's delay signal. Before the service has shown
 * how long a job takes, slow start is clocked by its acceptances (each makes room for one
 * more). Once it has, and while every job in flight finishes in about that time (it runs
 * them side by side), double the jobs in flight: as soon as the service's 202s say a round
 * runs (slow start clocked by its answers), else every `probeMs` (1.5 job-times when it
 * gives no due times) while the reader waits for a place. Once some only wait in the
 * service's queue (a job due more than 1.25 job-times away, or in flight 1.5 job-times),
 * keep twice as many as it runs (a round queued behind the running one, so it never idles
 * between one job's end and the next POST, and no job waits more than a round). Halve on a
 * 429, which also ends slow start.
 */

/** One job in flight, as the run has seen it. */
export interface FlightJob {
  /** When the service accepted it (epoch ms). */
  acceptedAt: number;
  /** When the service said it would be done (last poll + its Retry-After), if it said. */
  dueAt?: number;
  /** Taken over by a resumed run: it started before `acceptedAt`, so says nothing of job time. */
  resumed?: boolean;
  /** Its records, when known. */
  records?: number;
}

/** What the decision looks at. */
export interface FlightView {
  now: number;
  /** Jobs accepted and not yet downloaded. */
  jobs: readonly FlightJob[];
  /** Batches holding a place in flight (accepted, or on their way to the service). */
  inFlight: number;
  /** The shortest time a job as large as the largest in flight took, acceptance to results (ms). */
  fastestDoneMs?: number;
  /** 429s the service has answered since the run began. */
  throttled: number;
}

/** The decision carried from one call to the next. */
export interface FlightState {
  target: number;
  /** When the target last moved (a probe waits `probeMs` after it). */
  changedAt: number;
  /** `throttled` at the last decision (a new 429 since then halves the target once). */
  throttledSeen: number;
  /** When jobs were last seen waiting in the service's queue (growth waits a job-time after). */
  queueSeenAt?: number;
}

export interface FlightLimits {
  /** Most jobs in flight. */
  cap: number;
  /** How long the target holds before it may grow again. */
  probeMs: number;
}

/** Jobs in flight at the start of a run (before the service has shown anything). */
export const INITIAL_IN_FLIGHT = 4;
/** The most jobs in flight an adaptive run keeps. */
export const IN_FLIGHT_CAP = 32;
/** How often the target may double while the service keeps up. */
export const PROBE_MS = 500;

/** The starting state of an adaptive run. */
export function initialFlight(now: number, cap = IN_FLIGHT_CAP): FlightState {
  return { target: Math.min(cap, INITIAL_IN_FLIGHT), changedAt: now, throttledSeen: 0 };
}

/** The shortest job time the view shows: a job done, or one the service said is due. */
export function jobTime(v: FlightView): number | undefined {
  let best = v.fastestDoneMs;
  for (const j of v.jobs) {
    if (j.dueAt === undefined || j.resumed || j.dueAt <= j.acceptedAt) continue;
    const ms = j.dueAt - j.acceptedAt;
    best = best === undefined ? ms : Math.min(best, ms);
  }
  return best;
}

/** Retry-After is in whole seconds: a due time may be up to this late. */
const DUE_SLACK_MS = 1000;

/**
 * Jobs in flight that only wait in the service's queue now: due more than 1.25 job-times
 * (and Retry-After's rounding) from now, so they cannot have started, or, when the service
 * gives no due time, in flight longer than 1.5 job-times.
 */
export function queuedJobs(v: FlightView, base: number): number {
  let n = 0;
  for (const j of v.jobs) {
    const queued =
      j.dueAt !== undefined
        ? j.dueAt - v.now > 1.25 * base + DUE_SLACK_MS
        : v.now - j.acceptedAt > 1.5 * base;
    if (queued) n++;
  }
  return n;
}

/**
 * Jobs in flight that the service said run now: due (by a 202's Retry-After) within 1.25
 * job-times (and Retry-After's rounding) of their acceptance.
 */
export function runningJobs(v: FlightView, base: number): number {
  let n = 0;
  for (const j of v.jobs) {
    const said = (j.dueAt ?? Infinity) - j.acceptedAt; // no due time: not said to run
    if (!j.resumed && said <= 1.25 * base + DUE_SLACK_MS) n++;
  }
  return n;
}

/** The next state: the target of jobs in flight, within [1, cap]. */
export function decideInFlight(s: FlightState, v: FlightView, l: FlightLimits): FlightState {
  const at = (target: number, o: Partial<FlightState> = {}): FlightState => {
    const next = Math.max(1, Math.min(l.cap, target));
    return {
      ...s,
      target: next,
      changedAt: next === s.target ? s.changedAt : v.now,
      throttledSeen: v.throttled,
      ...o,
    };
  };
  if (v.throttled > s.throttledSeen) return at(Math.ceil(s.target / 2));
  const base = jobTime(v);
  // Slow start ends at the first 429: after it, the target grows only on the probe clock
  // (once a job time is known), or the next answers would undo the halving.
  const slowStart = v.throttled === 0;
  if (base === undefined) {
    // Before the service has shown how long a job takes (api-spec.md promises no Retry-After,
    // so it may say nothing until a job ends, minutes on a real service), nothing says whether
    // it runs the jobs side by side or queues them. Waiting for that end with 4 in flight costs
    // a whole job-time, so slow start is clocked by acceptances: every job the service accepts
    // makes room for one more, up to the cap. A service that queues them costs the run nothing
    // more (its jobs end when they would have); once a job ends, the queue is seen and the
    // target falls to what the service runs; a 429 halves it.
    const accepted = v.jobs.filter((j) => !j.resumed).length;
    return at(slowStart ? Math.max(s.target, 2 * accepted) : s.target);
  }
  const queued = queuedJobs(v, base);
  if (queued > 0) {
    const running = v.jobs.length - queued;
    // A round queued behind the one running: when a round ends, the next starts at once,
    // not after the run has seen it end and sent more (seconds on a busy client).
    const keep = 2 * Math.max(1, running);
    // Only down: while queued jobs drain, fewer in flight than the target is no evidence.
    return at(Math.min(keep, s.target), { queueSeenAt: v.now });
  }
  // A queue seen less than a job-time ago may be back as soon as more are sent.
  if (v.now - (s.queueSeenAt ?? -Infinity) < base) return at(s.target);
  // Slow start clocked by the service's answers: every job it says runs now (its first 202's
  // due time is one job-time after its acceptance) makes room for one more, so the target
  // doubles as fast as the service confirms a round, not once per probe interval. Bounded by
  // that evidence: never more than twice the jobs the service said it runs side by side.
  const running = runningJobs(v, base);
  if (slowStart && base >= l.probeMs && 2 * running > s.target) return at(2 * running);
  // Else double every probe interval while the reader waits for a place: against fast jobs
  // too, where the round trips (POST, download) are the wait and more jobs in flight overlap them.
  // A service that gives no due times shows a queue only once a job has been in flight 1.5
  // job-times: doubling faster than that sent 32 jobs into a queue of 2 each time one drained.
  const quiet = v.jobs.every((j) => j.dueAt === undefined);
  const interval = quiet ? Math.max(l.probeMs, 1.5 * base) : l.probeMs;
  const busy = v.inFlight >= s.target;
  if (busy && v.now - s.changedAt >= interval) return at(s.target * 2);
  return at(s.target);
}
