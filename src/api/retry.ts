/**
 * The retry decision, as pure functions: given what went wrong, when, and how the
 * request was sent, say whether to try again and after how long. The client injects
 * clock, sleep and randomness, so tests drive these rules without waiting.
 */

/** Limits on retrying one call. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Backoff of the first retry, doubled on each following one. */
  baseMs: number;
  /** Cap on one backoff delay (a longer server Retry-After is still honoured, within maxTotalWaitMs). */
  maxMs: number;
  /** Cap on the time spent on one call, waits included, beyond which we stop retrying. */
  maxTotalWaitMs: number;
}

/** Defaults: 5 attempts, 500 ms doubling to 30 s, at most 2 minutes in all. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseMs: 500,
  maxMs: 30_000,
  maxTotalWaitMs: 120_000,
};

/**
 * What went wrong with one attempt.
 * - `status`: the server answered with an error status.
 * - `connect`: no connection was made (refused, DNS, connect timeout): the server saw nothing.
 * - `network`: the connection failed after the request went out (reset, closed): ambiguous.
 * - `timeout`: no answer or body in time after the request went out: ambiguous.
 * - `truncated`: the body ended early: the server processed the request.
 * - `malformed`: the answer did not parse or match the contract: retrying will not help.
 * - `deadline`: the overall deadline passed.
 */
export type Failure =
  | { kind: 'status'; status: number }
  | { kind: 'connect' | 'network' | 'timeout' | 'truncated' | 'malformed' | 'deadline' };

/** Inputs of one retry decision. */
export interface RetryInput {
  /** The attempt that just failed (1 for the first). */
  attempt: number;
  failure: Failure;
  method: string;
  /** True when a POST carries an Idempotency-Key the service is known to honour. */
  idempotent: boolean;
  /** The server's Retry-After, in ms, when it sent one. */
  retryAfterMs?: number | undefined;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  /**
   * Milliseconds left before the caller's deadline, when there is one: it then bounds every
   * wait instead of `policy.maxTotalWaitMs`, and a wait past it is cut to a last try at it.
   */
  remainingMs?: number | undefined;
  policy: RetryPolicy;
  /** A number in [0, 1) for jitter. */
  random: number;
}

/** The outcome: retry after `delayMs`, or stop; `reason` explains it for --debug. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

const NEVER_RETRIED = new Set([400, 401, 403, 404, 409, 413, 422]);

/** True when repeating the request cannot spend anything twice. */
function isRepeatable(method: string, idempotent: boolean): boolean {
  const m = method.toUpperCase();
  return m === 'GET' || m === 'HEAD' || idempotent;
}

/** Says whether this kind of failure may be retried at all, and why not when it may not. */
export function classifyRetryable(
  failure: Failure,
  method: string,
  idempotent: boolean,
): { ok: true } | { ok: false; reason: string } {
  const repeatable = isRepeatable(method, idempotent);
  switch (failure.kind) {
    case 'status': {
      const s = failure.status;
      if (s === 429) return { ok: true }; // rate limited: the server did not process it
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,BlockStatement: a 4xx that skips this falls to the same refusal below
      if (NEVER_RETRIED.has(s) || (s >= 400 && s < 500)) {
        return { ok: false, reason: `status ${s} is not retried` };
      }
      if (s >= 500) {
        return repeatable
          ? { ok: true }
          : {
              ok: false,
              reason: `a ${method} to a service not known to honour Idempotency-Key may have been processed`,
            };
      }
      return { ok: false, reason: `status ${s} is not retried` };
    }
    case 'connect':
      return { ok: true }; // nothing reached the server
    case 'network':
    case 'timeout':
    case 'truncated':
      return repeatable
        ? { ok: true }
        : {
            ok: false,
            reason: `a ${method} to a service not known to honour Idempotency-Key may have been processed`,
          };
    case 'malformed':
      return { ok: false, reason: 'a malformed answer is not retried' };
    case 'deadline':
      return { ok: false, reason: 'the overall deadline passed' };
  }
}

/** Exponential backoff with equal jitter: half the step fixed, half random. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: number): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  // A broken random source must not make the delay NaN (which setTimeout reads as 0).
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1) : 0.5;
  return Math.round(step / 2 + (step / 2) * r);
}

/** True for a 429: the service did not process it, and it uses up no attempt. */
export function isRateLimited(failure: Failure): boolean {
  // Stryker disable next-line ConditionalExpression: only a status failure has a status to be 429
  return failure.kind === 'status' && failure.status === 429;
}

/**
 * Decides whether to retry after a failed attempt, and after how long. A 429 uses up no
 * attempt and is retried while the deadline leaves time; its wait (Retry-After, or the
 * backoff of bare 429s) belongs to the client's shared rate limiter, so the delay is 0.
 */
export function decide(input: RetryInput): RetryDecision {
  const { attempt, failure, method, idempotent, policy, remainingMs } = input;
  const rateLimited = isRateLimited(failure);
  if (!rateLimited && attempt >= policy.maxAttempts) {
    return { retry: false, reason: `gave up after ${attempt} attempts` };
  }
  const verdict = classifyRetryable(failure, method, idempotent);
  if (!verdict.ok) return { retry: false, reason: verdict.reason };
  // Stryker disable next-line ConditionalExpression: `undefined <= 0` is false as well
  if (remainingMs !== undefined && remainingMs <= 0) {
    return { retry: false, reason: 'the deadline passed' };
  }
  if (rateLimited) return { retry: true, delayMs: 0 };
  const delayMs =
    input.retryAfterMs !== undefined
      ? Math.max(0, input.retryAfterMs)
      : backoffMs(attempt, policy, input.random);
  if (remainingMs !== undefined) return { retry: true, delayMs: Math.min(delayMs, remainingMs) };
  if (input.elapsedMs + delayMs > policy.maxTotalWaitMs) {
    return {
      retry: false,
      reason: `waiting ${delayMs}ms more would exceed the ${policy.maxTotalWaitMs}ms retry budget`,
    };
  }
  return { retry: true, delayMs };
}

/**
 * Parses a Retry-After header: delay-seconds (`"2"`) or an HTTP-date, relative to
 * `now` (epoch ms). Returns ms to wait (0 for a past date), or undefined when absent or unreadable.
 */
export function parseRetryAfter(
  header: string | string[] | undefined | null,
  now: number,
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  // Stryker disable next-line ConditionalExpression,StringLiteral: '' matches neither form below either
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // HTTP-date must name a weekday/month; Date.parse alone accepts too much (e.g. "-1").
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
