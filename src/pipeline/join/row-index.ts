/** In a run's `reps`: a row answered from the results cache (its duplicates point at it as usual). */
export const CACHED_ROW = -2;

/**
 * A growable array of 32-bit integers in fixed chunks: one entry per input row
 * (4 bytes a row, about 4 MB for a million rows), so the run remembers what became
 * of each row without holding the rows.
 */
export class RowIndex {
  private readonly chunks: Int32Array[] = [];
  private count = 0;
  private static readonly CHUNK = 65_536;

  /** Number of entries. */
  get length(): number {
    return this.count;
  }

  /** Appends a value for the next row. */
  push(value: number): void {
    const c = Math.floor(this.count / RowIndex.CHUNK);
    if (c === this.chunks.length) this.chunks.push(new Int32Array(RowIndex.CHUNK));
    (this.chunks[c] as Int32Array)[this.count % RowIndex.CHUNK] = value;
    this.count++;
  }

  /** The value of row `i` (undefined past the end). */
  get(i: number): number | undefined {
    if (i < 0 || i >= this.count) return undefined;
    return (this.chunks[Math.floor(i / RowIndex.CHUNK)] as Int32Array)[i % RowIndex.CHUNK];
  }
}
