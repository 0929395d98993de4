import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import {
  POLL_MAX_MS,
  nextPollDelay,
  pollJob,
  type ResultsAnswer,
} from '../../src/pipeline/poll.js';

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
    expect(nextPollDelay(0, 0, () => 0.5)).toBe(0);
    expect(nextPollDelay(0, 600_000, () => 0.5)).toBe(POLL_MAX_MS);
  });
  it('backs off from about 1 s to 30 s with jitter', () => {
    expect(nextPollDelay(0, undefined, () => 0.5)).toBe(1000);
    expect(nextPollDelay(0, undefined, () => 0)).toBe(800);
    expect(nextPollDelay(0, undefined, () => 1)).toBe(1200);
    expect(nextPollDelay(3, undefined, () => 0.5)).toBe(Math.round(1000 * 1.6 ** 3));
    expect(nextPollDelay(20, undefined, () => 0.5)).toBe(POLL_MAX_MS);
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
    expect(sleeps).toEqual([3000, 1600]);
  });

  it('gives up at the deadline without sleeping past it', async () => {
    const { env, sleeps } = fakeEnv();
    const out = await pollJob(async () => ({ state: 'pending', retryAfterMs: 10_000 }), {
      deadline: 25_000,
      env,
    });
    expect(out).toEqual({ state: 'timeout', polls: 3 });
    expect(sleeps).toEqual([10_000, 10_000]);
  });

  it('reports expiry when the results are gone (404)', async () => {
    const { env } = fakeEnv();
    const gone = new ApiError('API_NOT_FOUND', {
      status: 404,
      method: 'GET',
      path: '/x',
      message: 'gone',
    });
    const out = await pollJob(async () => Promise.reject(gone), { deadline: 1e9, env });
    expect(out).toEqual({ state: 'expired', polls: 1 });
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
