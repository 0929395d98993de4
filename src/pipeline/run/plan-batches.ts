/** Groups items into batches of `size`: push returns a full batch when one fills, flush the rest. */
export function createBatcher<T>(size: number): {
  push(item: T): T[] | undefined;
  flush(): T[] | undefined;
} {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`batch size must be a positive integer, got ${size}`);
  let batch: T[] = [];
  return {
    push(item) {
      batch.push(item);
      if (batch.length < size) return undefined;
      const full = batch;
      batch = [];
      return full;
    },
    flush() {
      if (batch.length === 0) return undefined;
      const rest = batch;
      batch = [];
      return rest;
    },
  };
}

/** Number of batches needed for `items` items. */
export function countBatches(items: number, size: number): number {
  return Math.ceil(items / size);
}
