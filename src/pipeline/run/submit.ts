import { ApiError } from '../../errors.js';

/**
 * True when the service refused a bulk submission for its size: 413, or a 400
 * whose message speaks of the number of records or a maximum. Such a batch is
 * split and submitted again; nothing was charged for it.
 */
export function isBatchTooLarge(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.status === 413) return true;
  if (err.status !== 400) return false;
  const texts = [err.message, ...err.fieldErrors.map((f) => `${f.path} ${f.message}`)];
  return texts.some((t) =>
    /(too many|too large|maximum|max(imum)? batch|limit).*(record|contact|compan|item|element)|(record|contact|compan|item|element)s?.*(limit|maximum|at most|exceed)/i.test(
      t,
    ),
  );
}

/** A counting semaphore. A released slot goes straight to the next waiter, so at most `max` are held. */
export function createSemaphore(max: number): { acquire(): Promise<void>; release(): void } {
  let active = 0;
  const queue: (() => void)[] = [];
  return {
    async acquire() {
      if (active < max) active++;
      else await new Promise<void>((resolve) => queue.push(resolve));
    },
    release() {
      const next = queue.shift();
      if (next) next();
      else active--;
    },
  };
}

/** Wraps tasks so that at most `max` run at once (bounds the HTTP requests in flight). */
export function createLimiter(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  const sem = createSemaphore(max);
  return async <T>(task: () => Promise<T>): Promise<T> => {
    await sem.acquire();
    try {
      return await task();
    } finally {
      sem.release();
    }
  };
}
