import { performance } from 'node:perf_hooks';
import { ApiError } from '../errors.js';
import { errorForStatus, statusLine } from './http-error.js';
import { WaitPastDeadline, type LimitScope, type RateLimiter } from './rate-limiter.js';
import { redact, redactAnswer } from './redact.js';
import { decide, isRateLimited, parseRetryAfter, type Failure, type RetryPolicy } from './retry.js';
import {
  AttemptFailure,
  performExchange,
  type Exchange,
  type RawResponse,
  type Timeouts,
} from './transport.js';
import type { Dispatcher } from 'undici';

export { redact } from './redact.js';

/** Everything one call needs besides the exchange itself. */
export interface SendContext {
  dispatcher: Dispatcher;
  origin: string;
  timeouts: Timeouts;
  retry: RetryPolicy;
  maxBodyBytes: number;
  clock: { now(): number };
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  debug?: ((line: string) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Secrets to blank out of any text that reaches a message or a caller. */
  secrets: readonly string[];
  /** The client's one rate limiter, shared by every call. */
  limiter: RateLimiter;
  /** Told when a 429 asks for a long wait (LONG_WAIT_MS or more), once per wait. */
  onLongWait?: ((wait: LongWait) => void) | undefined;
  /** The end of the last long wait told to onLongWait (epoch ms). */
  longWaitTold: { until: number };
}

/** A 429 that asks for a long wait: what was refused, until when, and the service's words. */
export interface LongWait {
  method: string;
  path: string;
  /** Epoch ms the service asked the client to wait until. */
  until: number;
  /** The refusal as the client reports it: `POST /contacts: 429 Too Many Requests: <message>`. */
  message: string;
  /** True when the wait ends after the call's deadline: the call gives up at once. */
  pastDeadline: boolean;
}

/** A wait a 429 asks for that a person should hear of (a rate limit's are a second or two). */
export const LONG_WAIT_MS = 30_000;

/** How one call may be retried. */
export interface SendOptions {
  /** True when a repeat cannot spend twice: a GET, or a POST whose key the service honours. */
  repeatable: boolean;
  /** Epoch ms the call must end by; without it, the policy's retry budget bounds the waits. */
  deadline?: number | undefined;
  /**
   * Stops the call's waits (the rate limiter's, a retry's backoff), never an attempt on the
   * wire: the caller wants nothing more sent, and what is on its way still gets its answer.
   */
  stop?: AbortSignal | undefined;
  /** Told of each attempt, for a caller that journals what may have reached the service. */
  hooks?: AttemptHooks | undefined;
}

/**
 * A call's journal: `sending` is awaited before each attempt goes on the wire (after every
 * wait), so a crash from then on knows the request may have been processed; `notSent` is told
 * of an attempt that proves it was not (a 429, a refused connection), when none before it may
 * have been, before the wait to send it again. A crash during that wait, which a 429's
 * Retry-After can make hours long, then leaves a request that is safe to send again.
 */
export interface AttemptHooks {
  sending(): Promise<void>;
  notSent(error: ApiError): Promise<void>;
}

/** A sleep on real timers that an AbortSignal cuts short. */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal fires 'abort' once, and the timer takes the listener off
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function setHint(error: ApiError, hint: string): void {
  // EnrichError's hint is read-only to callers; the client alone fills it in here.
  (error as { hint: string | undefined }).hint = hint;
}

function interrupted(ex: Exchange, cause: unknown): ApiError {
  return new ApiError('INTERRUPTED', {
    status: 0,
    method: ex.method,
    path: ex.label,
    message: `${ex.method} ${ex.label}: cancelled while waiting to send`,
    cause,
  });
}

const STOPPED_HINT =
  'it was stopped while it waited to be sent again, so whether the service processed it is not known';

const CANCELLED_HINT =
  'it was cancelled while on its way to the service, so whether the service processed it is not known';

/** The error for a POST that may have been processed and cannot be safely repeated. */
function unconfirmed(ex: Exchange, error: ApiError, repeated: boolean, hint?: string): ApiError {
  const out = new ApiError('UNCONFIRMED', {
    status: error.status,
    method: ex.method,
    path: ex.label,
    message: `${error.message}; the service may have processed (and charged) this request, but its answer was lost`,
    retryAfterMs: error.retryAfterMs,
    cause: error,
  });
  setHint(
    out,
    hint ??
      (repeated
        ? 'it was sent again with the same Idempotency-Key, which the service has shown it honours, and no answer came'
        : 'it was not sent again: the service has not shown that it honours Idempotency-Key, so a repeat could be charged twice'),
  );
  return out;
}

/**
 * True when a failed attempt may have been processed by the service: its answer was lost or
 * cut off (a reset, a timeout, the attempt's total limit), it was a 5xx, or it came and could
 * not be read. Only a failure to connect, a 429 and a 4xx say it was not.
 */
function mayHaveBeenProcessed(failure: Failure): boolean {
  if (failure.kind === 'status') return failure.status >= 500;
  // 'deadline' too: the total limit (totalMs) ends an attempt whose request went out, and the
  // headers' own limit is shorter, so the service had usually begun to answer (session 25: a
  // POST cut so was a plain TIMEOUT, journaled failed and sent again by the resume).
  return failure.kind !== 'connect';
}

type Attempt =
  | { raw: RawResponse }
  | { failure: Failure; error: ApiError; retryAfterMs?: number; toldUntil?: number };

/** The calls a 429 to this exchange holds back (rate-limiter.ts LimitScope). */
const scopeOf = (ex: Exchange): LimitScope => (ex.method === 'POST' ? 'post' : 'any');

/** One attempt: a 2xx answer (key masked), or what failed. */
async function attemptOnce(
  ctx: SendContext,
  ex: Exchange,
  attempt: number,
  timeouts: Timeouts,
): Promise<Attempt> {
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  try {
    const raw = await performExchange({ ...ctx, timeouts, exchange: ex });
    ctx.debug?.(`${ex.method} ${ex.label} -> ${raw.status} (${ms()}ms, attempt ${attempt})`);
    const retryAfterMs = parseRetryAfter(raw.headers['retry-after'], ctx.clock.now());
    const toldUntil = ctx.limiter.observe(raw.status, raw.headers, retryAfterMs, scopeOf(ex));
    if (raw.status >= 200 && raw.status < 300) return { raw: redactAnswer(raw, ctx.secrets) };
    const location = raw.headers.location;
    const error = errorForStatus({
      method: ex.method,
      path: ex.label,
      status: raw.status,
      bodyText: redact(raw.text, ctx.secrets),
      retryAfterMs,
      location: typeof location === 'string' ? redact(location, ctx.secrets) : undefined,
    });
    return { failure: { kind: 'status', status: raw.status }, error, retryAfterMs, toldUntil };
  } catch (err) {
    if (!(err instanceof AttemptFailure)) throw err;
    ctx.debug?.(`${ex.method} ${ex.label} -> ${err.error.code} (${ms()}ms, attempt ${attempt})`);
    // Cancelled on the wire (the client's signal): a POST may have been processed all the same.
    if (err.error.code === 'INTERRUPTED') {
      // Stryker disable next-line BooleanLiteral: with a hint given, `repeated` (which only picks the hint) changes nothing
      throw ex.method === 'POST' ? unconfirmed(ex, err.error, false, CANCELLED_HINT) : err.error;
    }
    err.error.message = redact(err.error.message, ctx.secrets);
    return { failure: err.failure, error: err.error };
  }
}

/**
 * The error of a call the service asked to wait until `until`, after the call's deadline: it
 * is not sent (again) at all, since coming back before the time it was told would only be
 * refused once more. `refused`: the call's own last refusal, when it had one.
 */
function waitRefused(ex: Exchange, until: number, now: number, refused?: ApiError): ApiError {
  const when = `the service asked to wait until ${new Date(until).toISOString()}, after the deadline, so it was not sent`;
  return new ApiError('RATE_LIMITED', {
    status: 429,
    method: ex.method,
    path: ex.label,
    message: refused ? `${refused.message}; ${when} again` : `${ex.method} ${ex.label}: ${when}`,
    retryAfterMs: Math.max(0, until - now),
  });
}

/** Tells the client's onLongWait of a 429 that asked for a long wait, once per wait. */
function tellLongWait(
  ctx: SendContext,
  ex: Exchange,
  error: ApiError,
  until: number,
  deadline: number,
): void {
  const told = ctx.longWaitTold;
  if (!ctx.onLongWait) return;
  if (until - ctx.clock.now() < LONG_WAIT_MS || until < told.until + LONG_WAIT_MS) return;
  told.until = until;
  ctx.onLongWait({
    method: ex.method,
    path: ex.label,
    until,
    message: error.message,
    pastDeadline: until > deadline,
  });
}

/** The per-attempt limits: a GET under a caller's deadline never outlives it (by 1 s at most). */
function timeoutsFor(ctx: SendContext, ex: Exchange, deadline: number | undefined): Timeouts {
  if (deadline === undefined || ex.method !== 'GET') return ctx.timeouts;
  const left = Math.max(1000, deadline - ctx.clock.now());
  return { ...ctx.timeouts, totalMs: Math.min(ctx.timeouts.totalMs, left) };
}

/** The signal that cuts a call's waits: the client's (which also ends attempts) and the call's. */
function waitSignal(ctx: SendContext, opts: SendOptions): AbortSignal | undefined {
  if (!opts.stop) return ctx.signal;
  return ctx.signal ? AbortSignal.any([ctx.signal, opts.stop]) : opts.stop;
}

/**
 * Sends an exchange, retrying by the rules of retry.ts under the shared rate limiter, and
 * resolves to the first 2xx answer. 429s use up no attempt; the deadline bounds every wait.
 * Throws the ApiError of the last attempt when it gives up, or UNCONFIRMED for a POST that
 * may have been processed and may not be repeated. Stopped while it waits (the client's
 * signal, or `opts.stop`), it throws INTERRUPTED when no attempt may have reached the
 * service, and UNCONFIRMED for a POST one may have.
 */
export async function sendWithRetry(
  ctx: SendContext,
  ex: Exchange,
  opts: SendOptions,
): Promise<RawResponse> {
  const started = ctx.clock.now();
  const deadline = opts.deadline ?? started + ctx.retry.maxTotalWaitMs;
  const signal = waitSignal(ctx, opts);
  let counted = 0;
  // A POST that may have been processed once is unconfirmed when it ends without an answer,
  // even when it was repeated with a key the service honours: the journal must not take it
  // for one that never reached the service (which the next run sends again by itself).
  let reached: ApiError | undefined;
  const stopped = (cause: unknown) =>
    ex.method === 'POST' && reached
      ? unconfirmed(ex, reached, opts.repeatable, STOPPED_HINT)
      : interrupted(ex, cause);
  // This call's last refusal, for the error of a wait it will not make.
  let refused: ApiError | undefined;
  for (let sent = 1; ; sent++) {
    try {
      // Stopped already (while an earlier wait of the caller's, or between two attempts).
      if (signal?.aborted) throw signal.reason;
      await ctx.limiter.acquire(deadline, signal, scopeOf(ex));
    } catch (cause) {
      if (!(cause instanceof WaitPastDeadline)) throw stopped(cause);
      const error = waitRefused(ex, cause.until, ctx.clock.now(), refused);
      if (ex.method === 'POST' && reached) throw unconfirmed(ex, error, opts.repeatable);
      throw error;
    }
    await opts.hooks?.sending();
    const result = await attemptOnce(ctx, ex, sent, timeoutsFor(ctx, ex, opts.deadline));
    if ('raw' in result) return result.raw;
    const { failure, error } = result;
    if (!isRateLimited(failure)) counted++;
    if (mayHaveBeenProcessed(failure)) reached = error;
    const decision = decide({
      attempt: Math.max(counted, 1),
      failure,
      method: ex.method,
      idempotent: opts.repeatable,
      retryAfterMs: result.retryAfterMs,
      // Stryker disable next-line ArithmeticOperator: decide reads elapsedMs only without remainingMs, which this call always gives (its deadline defaults to started + maxTotalWaitMs)
      elapsedMs: ctx.clock.now() - started,
      remainingMs: deadline - ctx.clock.now(),
      policy: ctx.retry,
      random: ctx.random(),
    });
    if (!decision.retry) {
      ctx.debug?.(`not retrying ${ex.method} ${ex.label}: ${decision.reason}`);
      if (sent > 1) error.message += ` (after ${sent} attempts)`;
      if (ex.method === 'POST' && reached) throw unconfirmed(ex, error, opts.repeatable);
      throw error;
    }
    refused = error;
    if (result.toldUntil !== undefined) tellLongWait(ctx, ex, error, result.toldUntil, deadline);
    if (!reached) await opts.hooks?.notSent(error);
    const why = failure.kind === 'status' ? statusLine(failure.status) : error.code;
    ctx.debug?.(
      `retrying ${ex.method} ${ex.label} in ${decision.delayMs}ms (attempt ${counted + 1} of ${ctx.retry.maxAttempts}, after ${why})`,
    );
    try {
      // A 429's wait is the rate limiter's (acquire, above): nothing more to sleep here.
      if (decision.delayMs > 0) await ctx.sleep(decision.delayMs, signal);
    } catch (cause) {
      throw stopped(cause);
    }
  }
}
