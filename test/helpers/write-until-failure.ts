import type { OutputRow, OutputWriter } from '../../src/io/write.js';

/** Writes `row(0..n-1)` until the writer fails, then closes; returns the error (undefined: none). */
export async function writeUntilFailure(
  w: OutputWriter,
  n: number,
  row: (i: number) => OutputRow,
): Promise<unknown> {
  try {
    for (let i = 0; i < n; i++) await w.write(row(i));
    await w.close();
  } catch (err) {
    return err;
  }
  return undefined;
}
