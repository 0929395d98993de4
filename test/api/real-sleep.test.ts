/**
 * The client's sleep on real timers (send.ts realSleep): every retry backoff and rate-limit
 * wait of a real run goes through it, and Ctrl-C must cut it at once, leaving nothing behind
 * (a timer that keeps the process alive, a listener per wait on the run's one signal).
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { realSleep } from '../../src/api/send.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Whether the promise has settled, and how, without waiting for it. */
function watch(p: Promise<void>) {
  const state: { done: boolean; error?: unknown } = { done: false };
  p.then(
    () => (state.done = true),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

describe('realSleep', () => {
  it('without a signal, resolves once its time has passed, not before, and leaves no timer', async () => {
    const s = watch(realSleep(5000));
    await vi.advanceTimersByTimeAsync(4999);
    expect(s.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(s).toEqual({ done: true });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('with a signal, resolves on time and takes its abort listener off the signal', async () => {
    const ac = new AbortController();
    const s = watch(realSleep(2000, ac.signal));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(s).toEqual({ done: true });
    // A run sleeps thousands of times on one signal: no listener may stay behind.
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('an abort while it sleeps rejects at once with the reason, and clears its timer', async () => {
    const ac = new AbortController();
    const s = watch(realSleep(60_000, ac.signal));
    await vi.advanceTimersByTimeAsync(10);
    const reason = new Error('interrupted by the user');
    ac.abort(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(s).toEqual({ done: true, error: reason });
    // No timer left to keep the process alive for the rest of the minute.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a signal aborted before it starts rejects at once: no timer, no listener', async () => {
    const ac = new AbortController();
    const reason = new Error('stopped');
    ac.abort(reason);
    const s = watch(realSleep(1000, ac.signal));
    await vi.advanceTimersByTimeAsync(0);
    expect(s).toEqual({ done: true, error: reason });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
