import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pollJob, type JobTime, type ResultsAnswer } from '../../src/pipeline/run/poll.js';

// A service that sends no Retry-After (api-spec.md promises none): the polls follow the job
// time the run's other jobs have shown, and are planned again when it changes.

/** A clock that moves only when the test fires the pending sleep; sleeps end early on abort. */
function manualEnv(o: { start?: number; random?: () => number; signal?: boolean } = {}) {
  let t = o.start ?? 0;
  const sleeps: number[] = [];
  let fire: (() => void) | undefined;
  const controller = new AbortController();
  return {
    sleeps,
    at: (ms: number) => void (t = ms),
    fire: () => fire?.(),
    abort: () => controller.abort(),
    listeners: () => getEventListeners(controller.signal, 'abort').length,
    env: {
      now: () => t,
      random: o.random ?? (() => 0.5),
      ...(o.signal === false ? {} : { signal: controller.signal }),
      sleep: (ms: number, signal?: AbortSignal) =>
        new Promise<void>((resolve) => {
          sleeps.push(ms);
          fire = () => {
            t += ms;
            resolve();
          };
          signal?.addEventListener('abort', () => resolve(), { once: true });
        }),
    },
  };
}

/** A job time the test sets, with the watchers it has. */
function settableJobTime() {
  let ms: number | undefined;
  const watchers = new Set<() => void>();
  const jobTime: JobTime = {
    ms: () => ms,
    watch(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
  };
  return {
    jobTime,
    watchers,
    set(v: number) {
      ms = v;
      for (const w of [...watchers]) w();
    },
  };
}

/** Results that are pending until the `k`-th poll. */
function doneAtPoll(k: number) {
  let n = 0;
  return async (): Promise<ResultsAnswer<number>> =>
    ++n >= k ? { state: 'done', records: [], remainingCredits: 1 } : { state: 'pending' };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('polls of a service that says nothing', () => {
  it('a wait is planned again when another job shows the job time: the poll lands when the job is due', async () => {
    const m = manualEnv();
    const jt = settableJobTime();
    const polls: number[] = [];
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      polls.push(m.env.now());
      return m.env.now() >= 600
        ? { state: 'done', records: [1], remainingCredits: 3 }
        : { state: 'pending' };
    };
    const out = pollJob(fetch, { deadline: 1e9, env: m.env, jobTime: jt.jobTime });
    await settle();
    expect(m.sleeps).toEqual([1000]); // no job time yet: a second
    expect(jt.watchers.size).toBe(1);
    m.at(400);
    jt.set(500); // another job took 500 ms: this one is due at 500
    await settle();
    expect(m.sleeps).toEqual([1000, 100]);
    m.fire(); // 500: not yet; a tenth of the job time, but at least 250 ms
    await settle();
    expect(m.sleeps).toEqual([1000, 100, 250]);
    m.fire(); // 750: done
    expect(await out).toMatchObject({ state: 'done', polls: 3 });
    expect(polls).toEqual([0, 500, 750]);
    expect(jt.watchers.size).toBe(0); // nothing is left watching
  });

  it("the age is counted from the first poll, not from the clock's zero", async () => {
    const m = manualEnv({ start: 50_000 });
    const jt = settableJobTime();
    const out = pollJob(async () => ({ state: 'pending' }), {
      deadline: 50_000 + 6000,
      env: m.env,
      jobTime: jt.jobTime,
    });
    for (let i = 0; i < 6; i++) {
      await settle();
      m.fire();
    }
    expect(await out).toMatchObject({ state: 'timeout' });
    expect(m.sleeps).toEqual([1000, 1000, 1000, 1000, 1000, 1000]);
  });

  it.each([
    ['in the past', 300],
    ['on this very moment (no wait of 0)', 900],
  ])('a job time that lands the poll %s polls at once', async (_, jobMs) => {
    const m = manualEnv();
    const jt = settableJobTime();
    const polls: number[] = [];
    const fetch = async (): Promise<ResultsAnswer<number>> => {
      polls.push(m.env.now());
      return polls.length > 1
        ? { state: 'done', records: [], remainingCredits: 3 }
        : { state: 'pending' };
    };
    const out = pollJob(fetch, { deadline: 1e9, env: m.env, jobTime: jt.jobTime });
    await settle();
    m.at(900);
    jt.set(jobMs);
    expect(await out).toMatchObject({ state: 'done', polls: 2 });
    expect(m.sleeps).toEqual([1000]);
    expect(polls).toEqual([0, 900]);
  });

  it('a wait that ran its course is not planned again (its jitter drawn once)', async () => {
    const draws = [0, 1, 1, 1];
    const m = manualEnv({ random: () => draws.shift() ?? 1, signal: false });
    const jt = settableJobTime();
    const out = pollJob(doneAtPoll(3), {
      deadline: 1e9,
      env: m.env,
      jobTime: jt.jobTime,
    });
    await settle();
    m.fire(); // 800 (jitter 0.8)
    await settle();
    m.fire();
    expect(await out).toMatchObject({ state: 'done', polls: 3 });
    expect(m.sleeps).toEqual([800, 1200]);
  });

  it('with no abort signal, a job time learned mid-wait still re-plans it', async () => {
    const m = manualEnv({ signal: false });
    const jt = settableJobTime();
    const out = pollJob(doneAtPoll(2), {
      deadline: 1e9,
      env: m.env,
      jobTime: jt.jobTime,
    });
    await settle();
    m.at(100);
    jt.set(600);
    await settle();
    m.fire();
    expect(await out).toMatchObject({ state: 'done', polls: 2 });
    expect(m.sleeps).toEqual([1000, 500]);
  });

  it("leaves no listener on the run's abort signal", async () => {
    const m = manualEnv();
    const jt = settableJobTime();
    const out = pollJob(doneAtPoll(4), {
      deadline: 1e9,
      env: m.env,
      jobTime: jt.jobTime,
    });
    for (let i = 0; i < 3; i++) {
      await settle();
      expect(m.listeners()).toBe(1); // the wait's own, while it waits
      m.fire();
    }
    await out;
    expect(m.listeners()).toBe(0);
  });

  it('interrupted during a poll, it does not wait at all', async () => {
    const m = manualEnv();
    const jt = settableJobTime();
    const out = pollJob(
      async (): Promise<ResultsAnswer<number>> => {
        m.abort(); // Ctrl-C while the request was out
        return { state: 'pending', retryAfterMs: 30_000 };
      },
      { deadline: 1e9, env: m.env, jobTime: jt.jobTime },
    );
    await expect(out).rejects.toMatchObject({ code: 'INTERRUPTED' });
    expect(m.sleeps).toEqual([]);
  });

  it('an interrupted wait stops watching and says so', async () => {
    const m = manualEnv();
    const jt = settableJobTime();
    const out = pollJob(async () => ({ state: 'pending' }), {
      deadline: 1e9,
      env: m.env,
      jobTime: jt.jobTime,
    });
    await settle();
    m.abort();
    await expect(out).rejects.toMatchObject({ code: 'INTERRUPTED' });
    expect(jt.watchers.size).toBe(0);
  });
});
