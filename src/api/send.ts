import { performance } from 'node:perf_hooks';
import { ApiError } from '../errors.js';
import { errorForStatus, statusLine } from './http-error.js';
import { decide, parseRetryAfter, type Failure, type RetryPolicy } from './retry.js';
import {
  AttemptFailure,
  performExchange,
  type Exchange,
  type RawResponse,
  type Timeouts,
} from './transport.js';
import type { Dispatcher } from 'undici';

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
  /** Secrets to blank out of any text that reaches a message. */
  secrets: readonly string[];
}

/** Replaces every occurrence of each secret in `text` with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out;
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
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function setHint(error: ApiError, hint: string): void {
  // EnrichError's hint is read-only to callers; the client alone fills it in here.
  (error as { hint: string | undefined }).hint = hint;
}

/**
 * Sends an exchange, retrying by the rules of retry.ts, and resolves to the first 2xx
 * answer. Throws the ApiError of the last attempt when it gives up.
 */
export async function sendWithRetry(
  ctx: SendContext,
  ex: Exchange,
  idempotent: boolean,
): Promise<RawResponse> {
  const started = ctx.clock.now();
  for (let attempt = 1; ; attempt++) {
    const t0 = performance.now();
    let failure: Failure;
    let error: ApiError;
    let retryAfterMs: number | undefined;
    try {
      const raw = await performExchange({ ...ctx, exchange: ex });
      const ms = Math.round(performance.now() - t0);
      ctx.debug?.(`${ex.method} ${ex.label} -> ${raw.status} (${ms}ms, attempt ${attempt})`);
      if (raw.status >= 200 && raw.status < 300) return raw;
      retryAfterMs = parseRetryAfter(raw.headers['retry-after'], ctx.clock.now());
      const location = raw.headers.location;
      error = errorForStatus({
        method: ex.method,
        path: ex.label,
        status: raw.status,
        bodyText: redact(raw.text, ctx.secrets),
        retryAfterMs,
        location: typeof location === 'string' ? redact(location, ctx.secrets) : undefined,
      });
      failure = { kind: 'status', status: raw.status };
    } catch (err) {
      if (!(err instanceof AttemptFailure)) throw err;
      const ms = Math.round(performance.now() - t0);
      ctx.debug?.(`${ex.method} ${ex.label} -> ${err.error.code} (${ms}ms, attempt ${attempt})`);
      if (err.error.code === 'INTERRUPTED') throw err.error;
      failure = err.failure;
      error = err.error;
      error.message = redact(error.message, ctx.secrets);
    }
    const decision = decide({
      attempt,
      failure,
      method: ex.method,
      idempotent,
      retryAfterMs,
      elapsedMs: ctx.clock.now() - started,
      policy: ctx.retry,
      random: ctx.random(),
    });
    if (!decision.retry) {
      ctx.debug?.(`not retrying ${ex.method} ${ex.label}: ${decision.reason}`);
      if (attempt > 1) error.message += ` (after ${attempt} attempts)`;
      if (ex.method === 'POST' && !idempotent && /may have been processed/.test(decision.reason)) {
        setHint(
          error,
          'the service may have processed this request (and charged for it), so it was not repeated',
        );
      }
      throw error;
    }
    const why = failure.kind === 'status' ? statusLine(failure.status) : error.code;
    ctx.debug?.(
      `retrying ${ex.method} ${ex.label} in ${decision.delayMs}ms (attempt ${attempt + 1} of ${ctx.retry.maxAttempts}, after ${why})`,
    );
    try {
      await ctx.sleep(decision.delayMs, ctx.signal);
    } catch (cause) {
      throw new ApiError('INTERRUPTED', {
        status: 0,
        method: ex.method,
        path: ex.label,
        message: `${ex.method} ${ex.label}: cancelled while waiting to retry`,
        cause,
      });
    }
  }
}
