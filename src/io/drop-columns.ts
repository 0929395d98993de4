import { copyWith } from '../copy-with.js';
import type { InputRow, InputSource } from './read.js';

/**
 * The same input without some of its columns (an earlier run's output columns, replaced by
 * this run's): its header, its rows' cells (and typed values) and a warning saying so.
 * Everything else (identity, close) is the input's own.
 */
export function withoutColumns(
  source: InputSource,
  drop: readonly number[],
  warning: string,
): InputSource {
  const gone = new Set(drop);
  const keep = source.rawHeader.map((_, i) => i).filter((i) => !gone.has(i));
  const pick = <T>(cells: readonly T[]): T[] => keep.map((i) => cells[i] as T);
  const shape = (row: InputRow): InputRow => {
    const out = copyWith(row, { cells: pick(row.cells) });
    if (row.values) out.values = pick(row.values);
    if (row.nested) out.nested = pick(row.nested);
    return out;
  };
  async function* rows(): AsyncGenerator<InputRow> {
    for await (const row of source.rows()) yield shape(row);
  }
  return {
    ...source,
    header: pick(source.header),
    rawHeader: pick(source.rawHeader),
    warnings: [...source.warnings, warning],
    rows,
    identity: () => source.identity(),
    close: () => source.close(),
  };
}
