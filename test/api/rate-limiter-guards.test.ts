import { describe, expect, it } from 'vitest';
import { MIN_RATE, createRateLimiter, readQuota } from '../../src/api/rate-limiter.js';

// The rate limiter's guards (issue 21: mutants of rate-limiter.ts that no test saw). Time is
// injected: `sleeps` records every wait the limiter asked for, and the clock moves by it.

function env(start = 1_000_000) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    clock: { now: () => now },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => void (now += ms),
    now: () => now,
  };
}

/** A limiter at `ceiling` whose rate a bare 429 halved once. */
async function halved(e: ReturnType<typeof env>, ceiling = 8) {
  const limiter = createRateLimiter(e, ceiling);
  await limiter.acquire(Infinity);
  limiter.observe(429, {});
  expect(limiter.rate()).toBe(ceiling / 2);
  return limiter;
}

describe('readQuota', () => {
  it('reads a combined RateLimit header that starts with its remaining count (r=0;t=5)', () => {
    expect(readQuota({ ratelimit: 'r=0;t=5' }, 0)).toEqual({ remaining: 0, resetMs: 5000 });
    expect(readQuota({ ratelimit: 'remaining=0, reset=5' }, 0)).toEqual({
      remaining: 0,
      resetMs: 5000,
    });
    // The first listed field is the reset: it is read there too.
    expect(readQuota({ ratelimit: 't=7;r=1' }, 0)).toEqual({ remaining: 1, resetMs: 7000 });
  });

  it('keeps every digit of a count and a reset, so a quota of 25 is not taken for 2', () => {
    expect(readQuota({ ratelimit: 'limit=100, remaining=25, reset=30' }, 0)).toEqual({
      remaining: 25,
      resetMs: 30_000,
    });
  });

  it('takes a reset of exactly 1e9 seconds as a delay (epoch times are larger), so no wait is cut short', () => {
    expect(readQuota({ 'ratelimit-reset': '1000000000' }, 1_000_000)).toEqual({
      resetMs: 1e12,
    });
    expect(readQuota({ 'ratelimit-reset': '1000000001' }, 1_000_000_000_000)).toEqual({
      resetMs: 1000,
    });
  });

  it('keeps a reset of 0 (the quota is back now) and a remaining count of 0', () => {
    expect(readQuota({ 'ratelimit-remaining': '0', 'ratelimit-reset': '0' }, 0)).toEqual({
      remaining: 0,
      resetMs: 0,
    });
  });

  it('ignores negative and infinite counts, so a nonsense header never blocks or unblocks anyone', () => {
    expect(readQuota({ 'ratelimit-remaining': '-1', 'ratelimit-reset': '-5' }, 0)).toEqual({});
    expect(
      readQuota({ 'ratelimit-remaining': 'Infinity', 'ratelimit-reset': 'Infinity' }, 0),
    ).toEqual({});
    expect(readQuota({ 'ratelimit-remaining': 'soon', 'ratelimit-reset': 'later' }, 0)).toEqual({});
  });

  it('reads the first value of a repeated header', () => {
    expect(
      readQuota({ 'ratelimit-remaining': ['0', '9'], 'ratelimit-reset': ['3', '8'] }, 0),
    ).toEqual({
      remaining: 0,
      resetMs: 3000,
    });
  });
});

describe('createRateLimiter', () => {
  it('takes a ceiling of 0 (or below) as no ceiling, so calls are not held back for ever', async () => {
    for (const ceiling of [0, -1]) {
      const e = env();
      const limiter = createRateLimiter(e, ceiling);
      expect(limiter.rate()).toBe(Infinity);
      for (let i = 0; i < 3; i++) await limiter.acquire(Infinity);
      expect(e.sleeps).toEqual([]);
    }
  });

  it('counts every 429 it observes, so the run summary says how often it was throttled', () => {
    const limiter = createRateLimiter(env(), 8);
    expect(limiter.throttled()).toBe(0);
    limiter.observe(429, {});
    limiter.observe(429, {}, 1000);
    limiter.observe(200, {});
    expect(limiter.throttled()).toBe(2);
  });

  it('a bare 429 exactly one slot after the last halving halves again (a burst is one slot long)', async () => {
    const e = env();
    const limiter = await halved(e);
    // Now 4/s: one slot is 250 ms.
    e.advance(249);
    limiter.observe(429, {});
    expect(limiter.rate()).toBe(4);
    e.advance(1);
    limiter.observe(429, {});
    expect(limiter.rate()).toBe(2);
  });

  it('each success adds back 5% of the rate, at least 0.1 request/s, up to the ceiling', async () => {
    const e = env();
    const limiter = await halved(e);
    limiter.observe(200, {});
    expect(limiter.rate()).toBeCloseTo(4.2, 10);
    // At the floor (one request every 20 s), a success adds the minimum step.
    const floor = createRateLimiter(e, 8);
    for (let i = 0; i < 20; i++) {
      e.advance(60_000);
      floor.observe(429, {});
    }
    expect(floor.rate()).toBe(MIN_RATE);
    floor.observe(204, {});
    expect(floor.rate()).toBeCloseTo(MIN_RATE + 0.1, 10);
  });

  it('only a 2xx answer adds back: an error, a redirect or an informational status leaves the rate as it is', async () => {
    const e = env();
    const limiter = await halved(e);
    for (const status of [100, 199, 300, 302, 400, 404, 500, 503]) limiter.observe(status, {});
    expect(limiter.rate()).toBe(4);
    limiter.observe(299, {});
    expect(limiter.rate()).toBeGreaterThan(4);
  });

  it('without a ceiling, a bare 429 halves what was sent in the last second only: older calls do not count', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    for (let i = 0; i < 10; i++) await limiter.acquire(Infinity);
    e.advance(1000); // those ten are now exactly one second old: out of the window
    for (let i = 0; i < 4; i++) await limiter.acquire(Infinity);
    limiter.observe(429, {});
    expect(limiter.rate()).toBe(2);
  });

  it('without a ceiling, remembers only the last 64 calls: a burst of 100 then a 429 gives 32/s', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    for (let i = 0; i < 100; i++) await limiter.acquire(Infinity);
    limiter.observe(429, {});
    expect(limiter.rate()).toBe(32);
  });

  it('a 429 that says the quota is used up (remaining 0, reset 2 s) is honoured as told: a 2 s wait, no slowdown', async () => {
    const e = env();
    const limiter = createRateLimiter(e, 8);
    limiter.observe(429, { ratelimit: 'r=0;t=2' });
    expect(limiter.rate()).toBe(8);
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([2000]);
  });

  it('a 429 whose quota still has requests left is a bare 429: it halves the rate and waits one slot, not for the reset', async () => {
    const e = env();
    const limiter = createRateLimiter(e, 8);
    limiter.observe(429, { 'ratelimit-remaining': '5', 'ratelimit-reset': '10' });
    expect(limiter.rate()).toBe(4);
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([250]);
  });

  it('a success with requests left in its quota blocks no one, whatever its reset says', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    limiter.observe(200, { 'ratelimit-remaining': '5', 'ratelimit-reset': '10' });
    await limiter.acquire(Infinity);
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([]);
  });

  it('a quota used up without a reset time blocks no one, and a later Retry-After still holds', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    limiter.observe(200, { 'ratelimit-remaining': '0' });
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([]);
    limiter.observe(429, {}, 3000);
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([3000]);
  });
});
