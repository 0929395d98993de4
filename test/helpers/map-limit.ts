import { createLimiter } from '../../src/pipeline/run/submit.js';

/**
 * Maps `items` through `fn`, `limit` at a time (the run's own limiter), results in order.
 * After a failure no more are started; it waits for those running, then throws the failure.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const run = createLimiter(limit);
  let failure: { error: unknown } | undefined;
  const settled = await Promise.allSettled(
    items.map((item, i) =>
      run(async () => {
        if (failure) return undefined; // not started: an item before it failed
        try {
          return await fn(item, i);
        } catch (error) {
          failure ??= { error };
          throw error;
        }
      }),
    ),
  );
  if (failure) throw failure.error;
  return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
