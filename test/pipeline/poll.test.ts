import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import {
  EXPIRY_MARGIN_MS,
  NOT_FOUND_PERSIST_MS,
  NOT_FOUND_SKEW_MS,
  POLL_FLOOR_MS,
  POLL_MAX_MS,
  capPollDelayByExpiry,
  nextPollDelay,
  notFoundMeansExpired,
  pollJob,
  type ResultsAnswer,
} from '../../src/pipeline/run/poll.js';

function fakeEnv() {
  let t = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    env: {
      now: () => t,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
      },
      random: () => 0.5,
    },
  };
}

describe('nextPollDelay', () => {
  it("honours the server's Retry-After, capped at 30 s", () => {
    expect(nextPollDelay(0, 2000, () => 0.5)).toBe(2000);
    // Retry-After: 0 on a job still running would poll in a tight loop: a floor instead.
    expect(nextPollDelay(0, 0, () => 0.5)).toBe(POLL_FLOOR_MS);
    expect(nextPollDelay(0, 100, () => 0.5)).toBe(POLL_FLOOR_MS);
    expect(nextPollDelay(0, 600_000, () => 0.5)).toBe(POLL_MAX_MS);
  });
  it("with no word from the service, waits a fifth of the job's age, 1 s to 30 s, with jitter", () => {
    expect(nextPollDelay(0, undefined, () => 0.5)).toBe(1000);
    expect(nextPollDelay(0, undefined, () => 0)).toBe(800);
    expect(nextPollDelay(0, undefined, () => 1)).toBe(1200);
    expect(nextPollDelay(4999, undefined, () => 0.5)).toBe(1000);
    expect(nextPollDelay(10_000, undefined, () => 0.5)).toBe(2000);
    expect(nextPollDelay(10_000, undefined, () => 1)).toBe(2400);
    expect(nextPollDelay(149_000, undefined, () => 0.5)).toBe(29_800);
    expect(nextPollDelay(600_000, undefined, () => 0.5)).toBe(POLL_MAX_MS);
    // Every job is seen done at most 20% (and the jitter) of its running time late.
    for (const done of [700, 5000, 10_000, 60_000, 140_000]) {
      let age = 0;
      while (age < done) age += nextPollDelay(age, undefined, () => 1);
      expect(age - done).toBeLessThanOrEqual(Math.max(1200, 0.24 * done));
    }
  });

  it('once other jobs showed a job time, polls when the job is due, then closely, then every quarter of it', () => {
    const at = (age: number, jobMs: number) => nextPollDelay(age, undefined, () => 0.5, jobMs);
    expect(at(0, 5000)).toBe(1000); // the share of the age comes first
    expect(at(4500, 5000)).toBe(500); // 5 s: the job time
    expect(at(4750, 5000)).toBe(250); // 250 ms is the shortest wait
    // Under 250 ms before it, or past it: a tenth of the job time, growing by half the lateness.
    expect(at(4751, 5000)).toBe(500);
    expect(at(5000, 5000)).toBe(500);
    expect(at(5600, 5000)).toBe(800);
    expect(at(40_000, 5000)).toBe(1250); // at most a quarter of it
    expect(at(2100, 2000)).toBe(250); // never under 250 ms
    expect(at(40_000, 2000)).toBe(1000); // far past: a second at least
    expect(at(40_000, 600_000)).toBe(8000); // the share of the age is sooner
    expect(at(700_000, 600_000)).toBe(POLL_MAX_MS);
    // Retry-After still wins; a job time of 0 or NaN is no hint.
    expect(nextPollDelay(4000, 3000, () => 0.5, 5000)).toBe(3000);
    expect(nextPollDelay(4000, undefined, () => 0.5, 0)).toBe(1000);
    expect(nextPollDelay(10_000, undefined, () => 0.5, 0)).toBe(2000);
    expect(nextPollDelay(4000, undefined, () => 0.5, Number.NaN)).toBe(1000);
  });
});

describe('pollJob', () => {
  it('waits as told until the results are done', async () => {
    const { env, sleeps } = fakeEnv();
    const answers: ResultsAnswer<number>[] = [
      { state: 'pending', retryAfterMs: 3000 },
      { state: 'pending' },
      { state: 'done', records: [1, 2], remainingCredits: 5 },
    ];
    const out = await pollJob(async () => answers.shift() as ResultsAnswer<number>, {
      deadline: 1e9,
      env,
    });
    expect(out).toEqual({ state: 'done', records: [1, 2], remainingCredits: 5, polls: 3 });
    expect(sleeps).toEqual([3000, 1000]);
  });

  it('gives up at the deadline without sleeping past it, after a last look at the deadline', async () => {
    const { env, sleeps } = fakeEnv();
    const out = await pollJob(async () => ({ state: 'pending', retryAfterMs: 10_000 }), {
      deadline: 25_000,
      env,
    });
    expect(out).toEqual({ state: 'timeout', polls: 4 });
    expect(sleeps).toEqual([10_000, 10_000, 5_000]);
  });

  it('waits until --timeout even when the service asks for longer, and takes the results then', async () => {
    const { env, sleeps } = fakeEnv();
    const answers: ResultsAnswer<number>[] = [
      { state: 'pending', retryAfterMs: 30_000 },
      { state: 'done', records: [7], remainingCredits: 1 },
    ];
    const out = await pollJob(async () => answers.shift() as ResultsAnswer<number>, {
      deadline: 10_000,
      env,
    });
    expect(out).toMatchObject({ state: 'done', records: [7], polls: 2 });
    expect(sleeps).toEqual([10_000]);
  });

  it('--no-wait (a deadline already passed) looks once and does not wait', async () => {
    const { env, sleeps } = fakeEnv();
    const out = await pollJob(async () => ({ state: 'pending', retryAfterMs: 1_000 }), {
      deadline: 0,
      env,
    });
    expect(out).toEqual({ state: 'timeout', polls: 1 });
    expect(sleeps).toEqual([]);
  });

  it('without a known expiry, reports expiry only after 404s persisted for 10 minutes', async () => {
    const { env } = fakeEnv();
    const gone = new ApiError('API_NOT_FOUND', {
      status: 404,
      method: 'GET',
      path: '/x',
      message: 'gone',
    });
    const seen: number[] = [];
    const fetch = async () => {
      seen.push(env.now());
      return Promise.reject(gone);
    };
    const out = await pollJob(fetch, { deadline: 1e9, env });
    expect(out.state).toBe('expired');
    expect(seen.at(-1)).toBeGreaterThanOrEqual(NOT_FOUND_PERSIST_MS);
    expect(seen.at(-2)).toBeLessThan(NOT_FOUND_PERSIST_MS);
  });

  it('a 404 that stops (results came back) restarts the 10 minutes, and the deadline ends it pending', async () => {
    const { env } = fakeEnv();
    const gone = new ApiError('API_NOT_FOUND', {
      status: 404,
      method: 'GET',
      path: '/x',
      message: '',
    });
    let n = 0;
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      n++;
      if (n % 2 === 0) return { state: 'pending', retryAfterMs: 60_000 };
      throw gone;
    };
    const starts: number[] = [];
    const onNotFound = (since: number, until: number) => {
      expect(until).toBe(since + NOT_FOUND_PERSIST_MS);
      starts.push(since);
    };
    const out = await pollJob(fetch, { deadline: 3 * NOT_FOUND_PERSIST_MS, env, onNotFound });
    expect(out.state).toBe('timeout');
    // Every 404 after a 202 begins a new run of them, told anew.
    expect(starts.length).toBe(Math.ceil(n / 2));
    expect(new Set(starts).size).toBe(starts.length);
  });

  it('lets other errors through', async () => {
    const { env } = fakeEnv();
    const denied = new ApiError('AUTH_INVALID', {
      status: 401,
      method: 'GET',
      path: '/x',
      message: 'no',
    });
    await expect(pollJob(async () => Promise.reject(denied), { deadline: 1e9, env })).rejects.toBe(
      denied,
    );
  });

  it('stops when the run is interrupted', async () => {
    const { env } = fakeEnv();
    const ac = new AbortController();
    ac.abort();
    await expect(
      pollJob(async () => ({ state: 'pending' }), {
        deadline: 1e9,
        env: { ...env, signal: ac.signal },
      }),
    ).rejects.toMatchObject({ code: 'INTERRUPTED' });
  });
});

describe('capPollDelayByExpiry', () => {
  const margin = EXPIRY_MARGIN_MS;
  it('leaves the delay alone when the expiry is unknown or the poll lands before the download-by moment', () => {
    expect(capPollDelayByExpiry(30_000, 0, undefined)).toBe(30_000);
    expect(capPollDelayByExpiry(30_000, 0, null)).toBe(30_000);
    expect(capPollDelayByExpiry(30_000, 0, Number.NaN)).toBe(30_000);
    expect(capPollDelayByExpiry(30_000, 0, margin + 30_000)).toBe(30_000);
  });
  it('brings a poll that would land after the download-by moment forward to it', () => {
    expect(capPollDelayByExpiry(30_000, 0, margin + 20_000)).toBe(20_000);
    expect(capPollDelayByExpiry(30_000, 5000, margin + 20_000)).toBe(15_000);
  });
  it('polls about every second inside the margin and past the expiry, sooner if told', () => {
    expect(capPollDelayByExpiry(30_000, 0, 20_000)).toBe(1000);
    expect(capPollDelayByExpiry(30_000, 0, margin + 400)).toBe(1000);
    expect(capPollDelayByExpiry(30_000, 50_000, 20_000)).toBe(1000);
    expect(capPollDelayByExpiry(300, 0, 20_000)).toBe(300);
    expect(capPollDelayByExpiry(0, 0, 20_000)).toBe(0);
  });
  it('goes back to the usual schedule a margin past the expiry (the service still has the job)', () => {
    expect(capPollDelayByExpiry(30_000, 20_000 + margin, 20_000)).toBe(1000);
    expect(capPollDelayByExpiry(30_000, 20_001 + margin, 20_000)).toBe(30_000);
  });
});

describe('pollJob with an expiry', () => {
  const gone = new ApiError('API_NOT_FOUND', {
    status: 404,
    method: 'GET',
    path: '/contacts/results/j.json',
    message: 'gone',
  });
  /** A job ready at `readyAt` whose results are deleted at `goneAt` (fake clock), answering Retry-After `retryAfterMs` until ready. */
  function job(now: () => number, o: { readyAt: number; goneAt: number; retryAfterMs?: number }) {
    const polls: number[] = [];
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      polls.push(now());
      if (now() >= o.goneAt) throw gone;
      if (now() < o.readyAt) return { state: 'pending', retryAfterMs: o.retryAfterMs };
      return { state: 'done', records: [1], remainingCredits: 5 };
    };
    return { polls, fetch };
  }

  it('Retry-After 30 s with the results expiring in 20 s: polls every second and downloads them', async () => {
    const { env, sleeps } = fakeEnv();
    const j = job(env.now, { readyAt: 5000, goneAt: 20_000, retryAfterMs: 30_000 });
    const out = await pollJob(j.fetch, { deadline: 1e9, env, expires: 20_000 });
    expect(out).toMatchObject({ state: 'done', records: [1], polls: 6 });
    expect(sleeps).toEqual([1000, 1000, 1000, 1000, 1000]);
  });

  it('Retry-After 30 s: the poll lands on the download-by moment, then every second', async () => {
    const { env, sleeps } = fakeEnv();
    const expires = EXPIRY_MARGIN_MS + 20_000;
    const j = job(env.now, { readyAt: 22_000, goneAt: expires, retryAfterMs: 30_000 });
    const out = await pollJob(j.fetch, { deadline: 1e9, env, expires });
    expect(out).toMatchObject({ state: 'done', polls: 4 });
    expect(j.polls).toEqual([0, 20_000, 21_000, 22_000]);
    expect(sleeps).toEqual([20_000, 1000, 1000]);
  });

  it('caps the backoff (no Retry-After) at the download-by moment likewise', async () => {
    const { env, sleeps } = fakeEnv();
    const expires = EXPIRY_MARGIN_MS + 12_000;
    const j = job(env.now, { readyAt: 14_000, goneAt: expires });
    const out = await pollJob(j.fetch, { deadline: 1e9, env, expires });
    expect(out).toMatchObject({ state: 'done', polls: 13 });
    // A second until 5 s, a fifth of the age after; 2074 at 10,368 would pass the moment at
    // 12,000: 1632; then every second.
    expect(sleeps).toEqual([
      1000, 1000, 1000, 1000, 1000, 1000, 1200, 1440, 1728, 1632, 1000, 1000,
    ]);
  });

  it('keeps the schedule of a job without a known expiry', async () => {
    for (const expires of [undefined, null]) {
      const { env, sleeps } = fakeEnv();
      const j = job(env.now, { readyAt: 50_000, goneAt: Infinity, retryAfterMs: 30_000 });
      const out = await pollJob(j.fetch, { deadline: 1e9, env, expires });
      expect(out).toMatchObject({ state: 'done', polls: 3 });
      expect(sleeps).toEqual([30_000, 30_000]);
    }
  });

  it('past the expiry by its own clock it still asks: the service decides', async () => {
    const late = fakeEnv();
    const stillThere = job(late.env.now, { readyAt: 1000, goneAt: Infinity, retryAfterMs: 30_000 });
    expect(
      await pollJob(stillThere.fetch, { deadline: 1e9, env: late.env, expires: -5000 }),
    ).toMatchObject({ state: 'done', polls: 2 });
    expect(late.sleeps).toEqual([1000]);

    const { env } = fakeEnv();
    const deleted = job(env.now, { readyAt: 0, goneAt: -5000 });
    const out = await pollJob(deleted.fetch, { deadline: 1e9, env, expires: -5000 });
    expect(out.state).toBe('expired');
    // A 404 counts only once the expiry is the skew margin behind us.
    expect(deleted.polls.at(-1)).toBeGreaterThanOrEqual(-5000 + NOT_FOUND_SKEW_MS);
    expect(deleted.polls.at(-2)).toBeLessThan(-5000 + NOT_FOUND_SKEW_MS);
  });

  it('a 404 before the expiry is not expiry: the job stays pending and its results are downloaded', async () => {
    const { env } = fakeEnv();
    // Two days before expiry the service answers 404 for a while (a lagging replica), then 200.
    const expires = 2 * 86_400_000;
    let n = 0;
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      if (++n <= 3)
        throw new ApiError('API_NOT_FOUND', {
          status: 404,
          method: 'GET',
          path: '/x',
          message: '',
        });
      return { state: 'done', records: [1], remainingCredits: 5 };
    };
    const told: [number, number][] = [];
    const onNotFound = (since: number, until: number) => told.push([since, until]);
    expect(await pollJob(fetch, { deadline: 1e12, env, expires, onNotFound })).toMatchObject({
      state: 'done',
      records: [1],
      polls: 4,
    });
    // Told once, at the first 404 of the three, when 404s would mean the results are gone.
    expect(told).toEqual([[0, expires + NOT_FOUND_SKEW_MS]]);
    // Under --no-wait (deadline passed) the same 404 leaves the job pending for the next run,
    // saying since when it answers 404.
    const once = fakeEnv();
    const stillGone = async (): Promise<ResultsAnswer<number>> => {
      throw new ApiError('API_NOT_FOUND', { status: 404, method: 'GET', path: '/x', message: '' });
    };
    expect(await pollJob(stillGone, { deadline: 0, env: once.env, expires })).toEqual({
      state: 'timeout',
      polls: 1,
      notFoundSince: 0,
    });
  });

  it('notFoundMeansExpired: after the expiry plus the skew margin, or after 10 minutes of 404s', () => {
    expect(notFoundMeansExpired(10_000 + NOT_FOUND_SKEW_MS - 1, 10_000, 0)).toBe(false);
    expect(notFoundMeansExpired(10_000 + NOT_FOUND_SKEW_MS, 10_000, 0)).toBe(true);
    expect(notFoundMeansExpired(NOT_FOUND_PERSIST_MS + 5, undefined, 6)).toBe(false);
    expect(notFoundMeansExpired(NOT_FOUND_PERSIST_MS + 5, null, 5)).toBe(true);
  });

  it('still gives up at the deadline, and --no-wait (deadline passed) still looks only once', async () => {
    const { env, sleeps } = fakeEnv();
    const j = job(env.now, { readyAt: Infinity, goneAt: Infinity, retryAfterMs: 30_000 });
    expect(await pollJob(j.fetch, { deadline: 2500, env, expires: 20_000 })).toEqual({
      state: 'timeout',
      polls: 4,
    });
    expect(sleeps).toEqual([1000, 1000, 500]);
    const once = fakeEnv();
    const k = job(once.env.now, { readyAt: Infinity, goneAt: Infinity, retryAfterMs: 30_000 });
    expect(await pollJob(k.fetch, { deadline: 0, env: once.env, expires: 20_000 })).toEqual({
      state: 'timeout',
      polls: 1,
    });
  });
});
