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

/**
 * How many batches a run halves on a 400 that does not say why (api-spec.md shows neither the
 * most records a submission may hold nor the bodies of its errors) before any submission of
 * the run has been accepted. A limit on the size halves the first batch down to what fits in
 * a few steps, and a row the service refuses is found in about two per halving; a service
 * that refuses everything (a request option it rejects) costs no more than this many requests.
 */
export const BLIND_SPLITS = 16;

/** Splits a run may still make on a 400 that does not say why; counts one when it may. */
export interface SplitAllowance {
  /** A submission of the run was accepted: the service takes batches, so a 400 is about this one. */
  accepted: boolean;
  blind: number;
}

/**
 * Why a bulk submission the service refused is halved and sent again (nothing was charged for
 * a refused submission), or undefined when it is not: `too-large` when the service said so
 * (413, or a 400 speaking of the number of records), `refused` for any other 400 of a batch
 * of more than one row, while `allowance` lets it. Every element passed local validation, so a
 * 400 is either the batch's size, which the spec does not give, or one element the service
 * judged otherwise: halving finds either.
 */
export function splitReason(
  err: unknown,
  rows: number,
  allowance: SplitAllowance,
): 'too-large' | 'refused' | undefined {
  if (rows < 2) return undefined;
  if (isBatchTooLarge(err)) return 'too-large';
  if (!(err instanceof ApiError) || err.status !== 400) return undefined;
  if (!allowance.accepted && allowance.blind >= BLIND_SPLITS) return undefined;
  allowance.blind++;
  return 'refused';
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
