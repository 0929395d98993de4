import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  classifyRetryable,
  decide,
  DEFAULT_RETRY_POLICY,
  isRateLimited,
  parseRetryAfter,
  type RetryInput,
} from '../../src/api/retry.js';

// The retry decision's edges (issue 21: mutants of api/retry.ts that no test saw). A POST
// repeated when it may have been processed is a second charge; a retry never made is a run
// that stops early.

const base: RetryInput = {
  attempt: 1,
  failure: { kind: 'status', status: 500 },
  method: 'GET',
  idempotent: false,
  elapsedMs: 0,
  policy: DEFAULT_RETRY_POLICY,
  random: 0.5,
};
const at = (over: Partial<RetryInput>) => decide({ ...base, ...over });

describe('which failures are retried', () => {
  it.each([402, 405, 418, 451, 499])(
    'never retries any other 4xx (%i), whatever the method',
    (status) => {
      for (const idempotent of [false, true]) {
        expect(at({ failure: { kind: 'status', status }, method: 'POST', idempotent })).toEqual({
          retry: false,
          reason: `status ${status} is not retried`,
        });
      }
    },
  );

  it.each([100, 204, 304, 399])('does not retry an unexpected status %i', (status) => {
    expect(classifyRetryable({ kind: 'status', status }, 'GET', true)).toEqual({
      ok: false,
      reason: `status ${status} is not retried`,
    });
  });

  it('retries any 5xx (500 to 599) of a GET, a HEAD, a lower-case get, and a keyed POST', () => {
    for (const status of [500, 502, 599]) {
      const failure = { kind: 'status', status } as const;
      expect(classifyRetryable(failure, 'GET', false)).toEqual({ ok: true });
      expect(classifyRetryable(failure, 'HEAD', false)).toEqual({ ok: true });
      expect(classifyRetryable(failure, 'get', false)).toEqual({ ok: true });
      expect(classifyRetryable(failure, 'POST', true)).toEqual({ ok: true });
      expect(classifyRetryable(failure, 'POST', false)).toEqual({
        ok: false,
        reason: 'a POST to a service not known to honour Idempotency-Key may have been processed',
      });
    }
  });

  it.each(['network', 'timeout', 'truncated'] as const)(
    'a %s after the request went out: repeated only when that cannot charge twice',
    (kind) => {
      expect(classifyRetryable({ kind }, 'GET', false)).toEqual({ ok: true });
      expect(classifyRetryable({ kind }, 'POST', true)).toEqual({ ok: true });
      expect(classifyRetryable({ kind }, 'POST', false)).toEqual({
        ok: false,
        reason: 'a POST to a service not known to honour Idempotency-Key may have been processed',
      });
    },
  );

  it('a refused connection is retried for any method; a 429 is rate limiting, nothing else is', () => {
    expect(classifyRetryable({ kind: 'connect' }, 'POST', false)).toEqual({ ok: true });
    expect(classifyRetryable({ kind: 'status', status: 429 }, 'POST', false)).toEqual({ ok: true });
    expect(isRateLimited({ kind: 'status', status: 429 })).toBe(true);
    expect(isRateLimited({ kind: 'status', status: 503 })).toBe(false);
    expect(isRateLimited({ kind: 'timeout' })).toBe(false);
    expect(classifyRetryable({ kind: 'malformed' }, 'GET', true)).toEqual({
      ok: false,
      reason: 'a malformed answer is not retried',
    });
    expect(classifyRetryable({ kind: 'deadline' }, 'GET', true)).toEqual({
      ok: false,
      reason: 'the overall deadline passed',
    });
  });
});

describe('how long to wait', () => {
  it('a 429 is retried at any attempt, with no wait of its own, until the deadline passes', () => {
    const r429 = { kind: 'status', status: 429 } as const;
    expect(at({ failure: r429, attempt: 50 })).toEqual({ retry: true, delayMs: 0 });
    expect(at({ failure: r429, attempt: 50, remainingMs: 1 })).toEqual({ retry: true, delayMs: 0 });
    expect(at({ failure: r429, remainingMs: 0 })).toEqual({
      retry: false,
      reason: 'the deadline passed',
    });
    expect(at({ failure: r429, remainingMs: -5 }).retry).toBe(false);
  });

  it('a negative Retry-After waits 0; a deadline caps the wait', () => {
    expect(at({ retryAfterMs: -3000 })).toEqual({ retry: true, delayMs: 0 });
    expect(at({ retryAfterMs: 9000, remainingMs: 4000 })).toEqual({ retry: true, delayMs: 4000 });
    expect(at({ retryAfterMs: 3000, remainingMs: 4000 })).toEqual({ retry: true, delayMs: 3000 });
    // Under a deadline the retry budget does not apply.
    expect(at({ retryAfterMs: 9000, remainingMs: 9000, elapsedMs: 10_000_000 }).retry).toBe(true);
  });

  it('the retry budget: a wait ending exactly at it is allowed, one past it is not (and says why)', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxTotalWaitMs: 10_000 };
    expect(at({ policy, elapsedMs: 4000, retryAfterMs: 6000 })).toEqual({
      retry: true,
      delayMs: 6000,
    });
    expect(at({ policy, elapsedMs: 4001, retryAfterMs: 6000 })).toEqual({
      retry: false,
      reason: 'waiting 6000ms more would exceed the 10000ms retry budget',
    });
  });

  it('the backoff: attempt 0 or 1 is the base step; a broken random source gives the middle', () => {
    const p = { ...DEFAULT_RETRY_POLICY, baseMs: 100, maxMs: 1000 };
    expect(backoffMs(0, p, 1)).toBe(100);
    expect(backoffMs(1, p, 1)).toBe(100);
    expect(backoffMs(2, p, 0.5)).toBe(150);
    expect(backoffMs(2, p, Number.NaN)).toBe(150);
    expect(backoffMs(2, p, Infinity)).toBe(150);
    expect(backoffMs(2, p, 7)).toBe(200);
    expect(backoffMs(2, p, -7)).toBe(100);
    expect(at({ attempt: 2, random: 0 })).toEqual({ retry: true, delayMs: 500 });
  });

  it('gives up after maxAttempts, saying so; attempts before it are retried', () => {
    expect(at({ attempt: 4 }).retry).toBe(true);
    expect(at({ attempt: 5 })).toEqual({ retry: false, reason: 'gave up after 5 attempts' });
    expect(at({ attempt: 6 })).toEqual({ retry: false, reason: 'gave up after 6 attempts' });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);
  it('reads fractional seconds, the first of several headers, and blanks as nothing', () => {
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter('1.25', now)).toBe(1250);
    expect(parseRetryAfter(['2', '9'], now)).toBe(2000);
    expect(parseRetryAfter('   ', now)).toBeUndefined();
    expect(parseRetryAfter([], now)).toBeUndefined();
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Someday, 99 Foo 2026', now)).toBeUndefined();
  });
});
