import { describe, expect, it } from 'vitest';
import {
  MIN_RATE,
  WaitPastDeadline,
  createRateLimiter,
  readQuota,
} from '../../src/api/rate-limiter.js';

function env() {
  let now = 1_000_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    clock: { now: () => now },
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => void (now += ms),
  };
}

describe('readQuota', () => {
  it('reads RateLimit-Remaining/-Reset and both forms of the combined RateLimit header', () => {
    expect(readQuota({ 'ratelimit-remaining': '0', 'ratelimit-reset': '5' }, 0)).toEqual({
      remaining: 0,
      resetMs: 5000,
    });
    expect(readQuota({ ratelimit: '"default";r=3;t=2' }, 0)).toEqual({
      remaining: 3,
      resetMs: 2000,
    });
    expect(readQuota({ ratelimit: 'limit=100, remaining=0, reset=9' }, 0)).toEqual({
      remaining: 0,
      resetMs: 9000,
    });
    expect(readQuota({ 'ratelimit-reset': '2000000005' }, 2_000_000_000_000)).toEqual({
      resetMs: 5000,
    });
    expect(readQuota({ ratelimit: 'garbage' }, 0)).toEqual({});
  });
});

describe('createRateLimiter', () => {
  it('paces calls at the ceiling', async () => {
    const e = env();
    const limiter = createRateLimiter(e, 4);
    for (let i = 0; i < 4; i++) await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([250, 250, 250]);
  });

  it('halves the rate on a bare 429 (once per burst) and recovers gradually after successes', async () => {
    const e = env();
    const limiter = createRateLimiter(e, 8);
    await limiter.acquire(Infinity);
    limiter.observe(429, {});
    limiter.observe(429, {}); // the same burst: counted once
    expect(limiter.rate()).toBe(4);
    for (let i = 0; i < 5; i++) limiter.observe(200, {});
    expect(limiter.rate()).toBeGreaterThan(4);
    expect(limiter.rate()).toBeLessThan(8);
    for (let i = 0; i < 100; i++) limiter.observe(200, {});
    expect(limiter.rate()).toBe(8);
  });

  it('without a ceiling, a bare 429 starts from what was sent in the last second, never below the floor', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    expect(limiter.rate()).toBe(Infinity);
    for (let i = 0; i < 10; i++) await limiter.acquire(Infinity);
    limiter.observe(429, {});
    expect(limiter.rate()).toBe(5);
    for (let i = 0; i < 20; i++) {
      e.advance(60_000);
      limiter.observe(429, {});
    }
    expect(limiter.rate()).toBe(MIN_RATE);
  });

  it('honours Retry-After and an exhausted quota for every caller, without slowing down for them', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    limiter.observe(429, {}, 3000);
    await limiter.acquire(Infinity);
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([3000]);
    limiter.observe(200, { ratelimit: '"default";r=0;t=2' });
    await limiter.acquire(Infinity);
    expect(e.sleeps).toEqual([3000, 2000]);
    expect(limiter.rate()).toBe(Infinity);
  });

  it('pacing never waits past the deadline: a slot beyond it becomes a last try at it', async () => {
    const e = env();
    const limiter = createRateLimiter(e, 0.1); // a slot every 10 s
    await limiter.acquire(Infinity);
    await limiter.acquire(e.clock.now() + 5000);
    expect(e.sleeps).toEqual([5000]);
  });

  it('a wait the service asked for that ends past the deadline is not made at all: WaitPastDeadline at once, saying until when', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    const until = limiter.observe(429, {}, 60_000);
    expect(until).toBe(e.clock.now() + 60_000);
    const refusal = limiter.acquire(e.clock.now() + 5000);
    await expect(refusal).rejects.toBeInstanceOf(WaitPastDeadline);
    await expect(refusal).rejects.toMatchObject({
      name: 'WaitPastDeadline',
      until: e.clock.now() + 60_000,
      message: `the service asked to wait until ${new Date(e.clock.now() + 60_000).toISOString()}`,
    });
    expect(e.sleeps).toEqual([]);
    // A quota used up until after the deadline alike; a deadline after the wait waits it out.
    limiter.observe(200, { ratelimit: '"default";r=0;t=120' });
    await expect(limiter.acquire(e.clock.now() + 119_000)).rejects.toMatchObject({
      until: e.clock.now() + 120_000,
    });
    await limiter.acquire(e.clock.now() + 120_000);
    expect(e.sleeps).toEqual([120_000]);
  });

  it('a 429 to a POST holds back the POSTs only (results go on being downloaded); one to a GET holds back every call', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    expect(limiter.observe(429, {}, 3_600_000, 'post')).toBe(e.clock.now() + 3_600_000);
    await limiter.acquire(Infinity, undefined, 'any');
    expect(e.sleeps).toEqual([]);
    await expect(limiter.acquire(e.clock.now() + 60_000, undefined, 'post')).rejects.toMatchObject({
      until: e.clock.now() + 3_600_000,
    });
    limiter.observe(429, {}, 2000, 'any');
    await limiter.acquire(Infinity, undefined, 'any');
    await limiter.acquire(Infinity, undefined, 'post');
    expect(e.sleeps).toEqual([2000, 3_600_000 - 2000]);
  });

  it('a deadline already past with a wait that is over (or ends now) is no refusal: the call goes at once', async () => {
    const e = env();
    const limiter = createRateLimiter(e);
    limiter.observe(429, {}, 1000);
    e.advance(1000); // the wait ends now
    await limiter.acquire(e.clock.now() - 500);
    e.advance(1000); // and is over
    await limiter.acquire(e.clock.now() - 500);
    expect(e.sleeps).toEqual([]);
  });

  it('a bare 429 tells no wait (undefined) and a success none either', () => {
    const limiter = createRateLimiter(env());
    expect(limiter.observe(429, {}, undefined, 'post')).toBeUndefined();
    expect(limiter.observe(200, {})).toBeUndefined();
  });
});
