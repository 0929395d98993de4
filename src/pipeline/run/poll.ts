import { EnrichError, isEnrichError } from '../../errors.js';
import { isDateTime } from '../../contract/rules.js';

/** What a results request answered, as the pipeline needs it. */
export type ResultsAnswer<R> =
  | { state: 'pending'; retryAfterMs?: number; processed?: number; total?: number }
  | { state: 'done'; records: R[]; remainingCredits: number; body?: Uint8Array };

/** How a job's polling ended (`body`: the validated response body as it came, to spool as is). */
export type PollOutcome<R> =
  | { state: 'done'; records: R[]; remainingCredits: number; polls: number; body?: Uint8Array }
  | { state: 'expired'; polls: number }
  /** `notFoundSince`: every poll since then (epoch ms) answered 404. */
  | { state: 'timeout'; polls: number; notFoundSince?: number };

export const POLL_MIN_MS = 1000;
export const POLL_MAX_MS = 30_000;
/** The shortest wait between two polls of a job, whatever Retry-After says (0 would spin). */
export const POLL_FLOOR_MS = 250;
/**
 * With no word from the service, the wait before the next poll is this share of the job's
 * age: a job is seen done at most 20% of its running time late, whatever that time is (a
 * backoff by poll count, 1 s growing 1.6x, saw a 10 s job at 15.8 s).
 */
export const POLL_AGE_SHARE = 0.2;

/**
 * The wait before the next poll of a job `ageMs` old (since its polling began):
 * - the server's Retry-After when it gave one (capped at the maximum, and at least
 *   POLL_FLOOR_MS);
 * - else POLL_AGE_SHARE of the age, within 1 s to 30 s, with +-20% jitter so many jobs do
 *   not poll in lockstep;
 * - and, once other jobs have shown how long a job takes (`jobMs`: the shortest time from
 *   acceptance to results), a poll lands when the job is due; past that (it is a little
 *   slower, or waits in the service's queue) polls come a tenth of a job-time apart at first,
 *   then further apart, and at least every quarter of a job-time (a queued job starts when
 *   another ends).
 */
export function nextPollDelay(
  ageMs: number,
  retryAfterMs: number | undefined,
  random: () => number,
  jobMs?: number,
): number {
  const said = retryAfterMs ?? Number.NaN;
  if (Number.isFinite(said) && said >= 0) {
    return Math.max(POLL_FLOOR_MS, Math.min(said, POLL_MAX_MS));
  }
  const share = Math.min(Math.max(POLL_AGE_SHARE * ageMs, POLL_MIN_MS), POLL_MAX_MS);
  const delay = Math.round(share * (0.8 + 0.4 * random()));
  const job = jobMs ?? 0;
  if (!(job > 0)) return delay;
  // Due: the next poll lands when the job is.
  if (job - ageMs >= POLL_FLOOR_MS) return Math.min(delay, Math.round(job - ageMs));
  // Late: from a tenth of a job-time, the wait grows by half the lateness, up to a quarter
  // of a job-time (a queued job starts when another ends), and never under a second there.
  const late = Math.max(0, ageMs - job);
  const wait = Math.min(
    Math.max(POLL_MIN_MS, job / 4),
    Math.max(POLL_FLOOR_MS, job / 10 + late / 2),
  );
  return Math.min(delay, Math.round(wait));
}

/**
 * How long before a job's expiry its results must be downloaded by. A poll planned
 * for the last second would lose the results to any of: `expiration_date`'s whole-second
 * resolution, a clock that differs from the service's by a few seconds or tens of
 * seconds, the client's own retries of one failed poll (seconds of backoff), and the
 * download of a large result set. A minute covers all of these at the cost of a few
 * more polls near the end of a job's life.
 */
export const EXPIRY_MARGIN_MS = 60_000;

/**
 * Fits a poll delay to the job's expiry (epoch ms): the next poll never lands after the
 * download-by moment EXPIRY_MARGIN_MS before it; from that moment on, and past the
 * expiry (only the service can tell, with a 404, that the results are gone), polls come
 * at the minimum cadence, or sooner when the delay (a Retry-After) is shorter, until a
 * margin past the expiry, when the usual schedule resumes.
 */
export function capPollDelayByExpiry(
  delay: number,
  now: number,
  expires: number | null | undefined,
): number {
  if (!isDateTime(expires)) return delay;
  // Well past the expiry (the margin again, for clock skew) a service still answering 202
  // keeps the results: polling it every second until --timeout would only add load.
  if (now > expires + EXPIRY_MARGIN_MS) return delay;
  return Math.min(delay, Math.max(expires - EXPIRY_MARGIN_MS - now, POLL_MIN_MS));
}

/**
 * When a still-pending job must be fetched by, for the messages that say to run again:
 * the results are deleted at the expiry, so a later run would find them gone.
 */
export function resumeBy(
  expires: number | null | undefined,
  now: number,
  whose = "the job's results",
): string {
  if (!isDateTime(expires)) return '';
  const at = isoSecond(expires);
  return expires > now
    ? ` before ${at}, when ${whose} expire`
    : ` (${whose} were due to expire at ${at})`;
}

/** A moment (epoch ms) as an ISO time to the second: `2026-12-02T20:44:01Z`. */
export function isoSecond(ms: number): string {
  // Stryker disable next-line Regex: an ISO string has its milliseconds only at its end
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Environment of a poll loop: injected clock, sleep and randomness. */
export interface PollEnv {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
  signal?: AbortSignal;
}

/**
 * How long past `expiration_date` a 404 must come to mean the results are gone: the
 * service's clock may be behind ours, and api-spec.md lists 404 without saying when.
 */
export const NOT_FOUND_SKEW_MS = 5 * 60_000;
/** Without a usable expiry, how long 404s must persist before the results count as gone. */
export const NOT_FOUND_PERSIST_MS = 10 * 60_000;

/**
 * True when a 404 at `now` means the results expired: only once `expires` (epoch ms) is
 * NOT_FOUND_SKEW_MS behind us, or, with no usable expiry, once 404s have persisted since
 * `firstNotFoundAt` for NOT_FOUND_PERSIST_MS. Before that, the job is still pending.
 */
export function notFoundMeansExpired(
  now: number,
  expires: number | null | undefined,
  firstNotFoundAt: number,
): boolean {
  const until = notFoundUntil(expires, firstNotFoundAt);
  return now >= until;
}

/** When 404s that began at `firstNotFoundAt` come to mean the results expired (notFoundMeansExpired). */
export function notFoundUntil(expires: number | null | undefined, firstNotFoundAt: number): number {
  return isDateTime(expires) ? expires + NOT_FOUND_SKEW_MS : firstNotFoundAt + NOT_FOUND_PERSIST_MS;
}

const isNotFound = (err: unknown) => isEnrichError(err) && err.code === 'API_NOT_FOUND';

/**
 * Polls one job until its results are ready, the run's deadline passes, or the results
 * are gone (a 404 that notFoundMeansExpired accepts; an earlier 404 is polled again like a
 * 202), scheduling the polls to download before `expires` (epoch ms, when known). Other
 * errors propagate.
 */
export async function pollJob<R>(
  fetchResults: () => Promise<ResultsAnswer<R>>,
  opts: {
    deadline: number;
    env: PollEnv;
    expires?: number | null | undefined;
    /** How long a job takes, as other jobs of the run have shown, when they have. */
    jobTime?: JobTime;
    /** Told at the first 404 of a run of them that does not yet mean the results expired. */
    onNotFound?: (since: number, until: number) => void;
  },
): Promise<PollOutcome<R>> {
  const { env } = opts;
  const start = env.now();
  let firstNotFoundAt: number | undefined;
  for (let attempt = 0; ; attempt++) {
    if (env.signal?.aborted)
      throw new EnrichError('INTERRUPTED', 'interrupted while waiting for results');
    let answer: ResultsAnswer<R>;
    try {
      answer = await fetchResults();
      firstNotFoundAt = undefined;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const first = firstNotFoundAt === undefined;
      firstNotFoundAt ??= env.now();
      if (notFoundMeansExpired(env.now(), opts.expires, firstNotFoundAt)) {
        return { state: 'expired', polls: attempt + 1 };
      }
      if (first) opts.onNotFound?.(firstNotFoundAt, notFoundUntil(opts.expires, firstNotFoundAt));
      // Stryker disable next-line ObjectLiteral,StringLiteral: any answer other than 'done' is polled again alike
      answer = { state: 'pending' };
    }
    if (answer.state === 'done') {
      return {
        state: 'done',
        records: answer.records,
        remainingCredits: answer.remainingCredits,
        polls: attempt + 1,
        ...(answer.body !== undefined ? { body: answer.body } : {}),
      };
    }
    const polled = env.now();
    if (polled >= opts.deadline) {
      const polls = attempt + 1;
      return firstNotFoundAt === undefined
        ? { state: 'timeout', polls }
        : { state: 'timeout', polls, notFoundSince: firstNotFoundAt };
    }
    const { retryAfterMs } = answer;
    // The next poll's moment, planned from this poll with the job time known now.
    const plan = () =>
      polled +
      capPollDelayByExpiry(
        nextPollDelay(polled - start, retryAfterMs, env.random, opts.jobTime?.ms()),
        polled,
        opts.expires,
      );
    await waitForPoll(env, plan, opts.deadline, opts.jobTime);
  }
}

/** The job time other jobs of a run have shown, and its changes. */
export interface JobTime {
  ms(): number | undefined;
  /** Calls `listener` when `ms()` changes; returns the function that stops it. */
  watch(listener: () => void): () => void;
}

/**
 * Waits until the moment `plan` gives. A wait that would end past --timeout is cut short:
 * the job gets one last look at the deadline itself. (Giving up at once, as before, ended a
 * `--timeout 10s` run after a fraction of a second when the service asked for 30 s.) When
 * another job shows a shorter job time during the wait, the moment is planned again: a job
 * polled just before the first job of its round ended is then looked at when it is due, not a
 * whole wait later.
 */
async function waitForPoll(
  env: PollEnv,
  plan: () => number,
  deadline: number,
  jobTime: JobTime | undefined,
): Promise<void> {
  for (;;) {
    const ms = Math.min(plan(), deadline) - env.now();
    // Interrupted during the poll itself: its abort event has passed, so no wait at all.
    if (ms <= 0 || env.signal?.aborted) return;
    if (!jobTime) return env.sleep(ms, env.signal);
    const stop = new AbortController();
    let replan = false;
    const wake = () => stop.abort();
    const unwatch = jobTime.watch(() => {
      replan = true;
      wake();
    });
    env.signal?.addEventListener('abort', wake);
    try {
      await env.sleep(ms, stop.signal);
    } finally {
      unwatch();
      env.signal?.removeEventListener('abort', wake);
    }
    if (!replan || env.signal?.aborted) return;
  }
}
