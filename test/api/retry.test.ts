import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  decide,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type Failure,
  type RetryInput,
} from '../../src/api/retry.js';

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

describe('decide: which failures are retried', () => {
  it.each([400, 401, 403, 404, 409, 413, 422])(
    'never retries status %i, for any method',
    (status) => {
      for (const method of ['GET', 'POST']) {
        for (const idempotent of [false, true]) {
          expect(at({ failure: { kind: 'status', status }, method, idempotent }).retry).toBe(false);
        }
      }
    },
  );

  it('retries 429 for GET and for a POST without Idempotency-Key (nothing was processed)', () => {
    expect(at({ failure: { kind: 'status', status: 429 }, method: 'POST' }).retry).toBe(true);
    expect(at({ failure: { kind: 'status', status: 429 } }).retry).toBe(true);
  });

  it('retries 5xx for GET and keyed POST, but reports it for a plain POST', () => {
    const s503: Failure = { kind: 'status', status: 503 };
    expect(at({ failure: s503 }).retry).toBe(true);
    expect(at({ failure: s503, method: 'POST', idempotent: true }).retry).toBe(true);
    const plain = at({ failure: s503, method: 'POST' });
    expect(plain).toEqual({
      retry: false,
      reason: expect.stringMatching(/may have been processed/),
    });
  });

  it('retries a refused connection even for a plain POST', () => {
    expect(at({ failure: { kind: 'connect' }, method: 'POST' }).retry).toBe(true);
  });

  it.each(['network', 'timeout', 'truncated'] as const)(
    'treats %s as ambiguous: GET and keyed POST retry, plain POST does not',
    (kind) => {
      expect(at({ failure: { kind } }).retry).toBe(true);
      expect(at({ failure: { kind }, method: 'POST', idempotent: true }).retry).toBe(true);
      expect(at({ failure: { kind }, method: 'POST' }).retry).toBe(false);
    },
  );

  it('never retries a malformed answer or a passed deadline', () => {
    expect(at({ failure: { kind: 'malformed' } }).retry).toBe(false);
    expect(at({ failure: { kind: 'deadline' } }).retry).toBe(false);
  });
});

describe('decide: how long to wait', () => {
  it('honours the server Retry-After over the backoff', () => {
    expect(at({ failure: { kind: 'status', status: 503 }, retryAfterMs: 7000 })).toEqual({
      retry: true,
      delayMs: 7000,
    });
  });

  it('leaves the wait of a 429 to the rate limiter and counts no attempt for it', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
    const r429 = { failure: { kind: 'status', status: 429 } as const, policy };
    expect(at({ ...r429, attempt: 3, retryAfterMs: 7000 })).toEqual({ retry: true, delayMs: 0 });
    expect(at({ ...r429, remainingMs: 1 }).retry).toBe(true);
    expect(at({ ...r429, remainingMs: 0 })).toEqual({
      retry: false,
      reason: 'the deadline passed',
    });
  });

  it('under a deadline, honours any Retry-After within it and cuts a longer one to a last try', () => {
    const s503 = { failure: { kind: 'status', status: 503 } as const };
    // Beyond the 120 s budget, within the deadline: honoured.
    expect(at({ ...s503, retryAfterMs: 150_000, elapsedMs: 0, remainingMs: 7_200_000 })).toEqual({
      retry: true,
      delayMs: 150_000,
    });
    expect(at({ ...s503, retryAfterMs: 20_000, remainingMs: 3000 })).toEqual({
      retry: true,
      delayMs: 3000,
    });
    expect(at({ ...s503, retryAfterMs: 20_000, remainingMs: 0 }).retry).toBe(false);
  });

  it('stops at maxAttempts', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 3 };
    expect(at({ attempt: 2, policy }).retry).toBe(true);
    expect(at({ attempt: 3, policy })).toEqual({
      retry: false,
      reason: 'gave up after 3 attempts',
    });
  });

  it('stops when the wait would pass the total budget', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxTotalWaitMs: 10_000 };
    expect(at({ policy, elapsedMs: 4000, retryAfterMs: 6000 }).retry).toBe(true);
    expect(at({ policy, elapsedMs: 4001, retryAfterMs: 6000 }).retry).toBe(false);
  });

  it('backs off exponentially with jitter, capped at maxMs', () => {
    const p = { ...DEFAULT_RETRY_POLICY, baseMs: 100, maxMs: 1000 };
    expect(backoffMs(1, p, 0)).toBe(50);
    expect(backoffMs(1, p, 1)).toBe(100);
    expect(backoffMs(3, p, 0)).toBe(200);
    expect(backoffMs(3, p, 1)).toBe(400);
    expect(backoffMs(10, p, 1)).toBe(1000);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 1 }), (n, r) => {
        const d = backoffMs(n, p, r);
        const step = Math.min(p.maxMs, p.baseMs * 2 ** (n - 1));
        return d >= step / 2 - 1 && d <= step;
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(['3'], now)).toBe(3000);
  });

  it('reads an HTTP-date relative to the injected now, a past date as 0', () => {
    expect(parseRetryAfter(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    for (const v of [undefined, null, '', 'soon', '-1', '1e3']) {
      expect(parseRetryAfter(v, now)).toBeUndefined();
    }
  });
});
