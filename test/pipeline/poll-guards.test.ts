import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import {
  nextPollDelay,
  pollJob,
  isoSecond,
  resumeBy,
  type ResultsAnswer,
} from '../../src/pipeline/run/poll.js';

// The poll loop's edges (issue 21: survivors of poll.ts's first mutation run).

const env = () => {
  let t = 0;
  return { now: () => t, sleep: async (ms: number) => void (t += ms), random: () => 0.5 };
};
const gone = new ApiError('API_NOT_FOUND', {
  status: 404,
  method: 'GET',
  path: '/contacts/results/j.json',
  message: 'gone',
});

describe('the poll loop', () => {
  it.each([Number.NaN, Infinity, -5])(
    'a Retry-After of %s is no instruction: the usual backoff',
    (ra) => {
      expect(nextPollDelay(0, ra, () => 0.5)).toBe(1000);
      expect(nextPollDelay(20_000, ra, () => 0.5)).toBe(4000);
    },
  );

  it('says by when a pending job must be fetched, or that it was due', () => {
    const at = Date.UTC(2026, 10, 21, 19, 0, 0);
    expect(resumeBy(at, at - 1)).toBe(
      " before 2026-11-21T19:00:00Z, when the job's results expire",
    );
    expect(resumeBy(at, at)).toBe(
      " (the job's results were due to expire at 2026-11-21T19:00:00Z)",
    );
    // To the second, rounded down: "before" an earlier moment is still in time.
    expect(resumeBy(at + 999, at, 'its results')).toBe(
      ' before 2026-11-21T19:00:00Z, when its results expire',
    );
    expect(isoSecond(at + 59_999)).toBe('2026-11-21T19:00:59Z');
    expect(resumeBy(undefined, at)).toBe('');
    expect(resumeBy(null, at)).toBe('');
  });

  it('Ctrl-C before a poll: interrupted, saying so', async () => {
    const abort = new AbortController();
    abort.abort();
    const fetch = async (): Promise<ResultsAnswer<number>> => ({ state: 'pending' });
    await expect(
      pollJob(fetch, { deadline: 1e9, env: { ...env(), signal: abort.signal } }),
    ).rejects.toMatchObject({
      code: 'INTERRUPTED',
      message: 'interrupted while waiting for results',
    });
  });

  it('counts the polls that ended in expiry', async () => {
    const e = env();
    let n = 0;
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      if (n++ < 2) return { state: 'pending', retryAfterMs: 1000 };
      throw gone;
    };
    const out = await pollJob(fetch, { deadline: 1e9, env: e, expires: -1e9 });
    expect(out).toEqual({ state: 'expired', polls: 3 });
  });

  it('hands on the body as it came when there is one, and no body key when there is none', async () => {
    const body = new Uint8Array([91, 93]);
    const withBody = await pollJob(
      async (): Promise<ResultsAnswer<number>> => ({
        state: 'done',
        records: [],
        remainingCredits: 1,
        body,
      }),
      { deadline: 1e9, env: env() },
    );
    expect(withBody).toEqual({ state: 'done', records: [], remainingCredits: 1, polls: 1, body });
    const without = await pollJob(
      async (): Promise<ResultsAnswer<number>> => ({
        state: 'done',
        records: [7],
        remainingCredits: 1,
      }),
      { deadline: 1e9, env: env() },
    );
    expect('body' in without).toBe(false);
    expect(without).toMatchObject({ records: [7], polls: 1 });
  });
});
