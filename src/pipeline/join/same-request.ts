import type { SentItem } from '../types.js';

/** A batch in which some request was sent more than once: its span, and the rows of each such key. */
interface Repeats {
  first: number;
  last: number;
  rows: Map<string, number[]>;
}

/**
 * Under `--no-dedupe`, the rows of each batch that sent the same request as another row of
 * it. A record that came back without its row id names its request only by the echo of
 * what was sent (`original_fields`): that echo names one row when its key was sent once in
 * the batch, and when it was sent more often, only the key's rows together, whose records
 * the join then shares out (never one record to two rows). Holds only the rows of repeated
 * keys, batch by batch in row order.
 */
export class SameRequests {
  private readonly batches: Repeats[] = [];

  /** Notes a batch's items (in row order), before it is sent. */
  note(items: readonly SentItem[]): void {
    if (items.length < 2) return;
    const byKey = new Map<string, number[]>();
    for (const { index, key } of items) {
      const rows = byKey.get(key);
      if (rows) rows.push(index);
      else byKey.set(key, [index]);
    }
    for (const [key, rows] of byKey) if (rows.length < 2) byKey.delete(key);
    if (byKey.size === 0) return;
    const first = (items[0] as SentItem).index;
    const last = (items[items.length - 1] as SentItem).index;
    this.batches.push({ first, last, rows: byKey });
  }

  /** The rows of `row`'s batch that sent `key` (`row` among them), when more than one did. */
  of(row: number, key: string): readonly number[] | undefined {
    let lo = 0;
    let hi = this.batches.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const b = this.batches[mid] as Repeats;
      if (row < b.first) hi = mid - 1;
      else if (row > b.last) lo = mid + 1;
      else return b.rows.get(key);
    }
    return undefined;
  }
}
