import type { InputSource } from '../../io/read.js';
import type { VerifyProgress } from './types.js';

/** Rows read between two reports while nothing is answered (cache hits, rows without an address). */
export const PROGRESS_EVERY_ROWS = 500;

/**
 * The run's reports to its caller. A verification run reads its input as its answers come
 * (AHEAD_ROWS), so how many rows there are is known only at its end: when a caller listens,
 * a pass beside the run counts them (a quick parse, without a request) and the reports carry
 * the total from then on. The count stops with the run; an input it cannot read leaves the
 * total unknown (the run itself says why).
 */
export function createVerifyProgress(
  source: InputSource,
  onProgress: ((p: VerifyProgress) => void) | undefined,
  counts: () => Omit<VerifyProgress, 'rowsTotal'>,
) {
  let closed = false;
  let rowsTotal: number | undefined;
  const emit = () =>
    onProgress?.({ ...counts(), ...(rowsTotal === undefined ? {} : { rowsTotal }) });
  const counting = onProgress
    ? countRows(source, () => closed).then((n) => {
        rowsTotal = n;
        if (n !== undefined && !closed) emit();
      })
    : Promise.resolve();
  return {
    emit,
    /** Stops the count (if it still runs) and waits for it: nothing reads the input after the run. */
    async close(): Promise<void> {
      closed = true;
      await counting;
    },
  };
}

/** The input's data rows, or undefined when stopped first or the input cannot be read. */
async function countRows(source: InputSource, stopped: () => boolean): Promise<number | undefined> {
  let n = 0;
  try {
    for await (const _row of source.rows()) {
      if (stopped()) return undefined;
      n++;
    }
    return n;
  } catch {
    return undefined;
  }
}
