import type { InputRow } from './read.js';

/** Shapes CSV records into InputRows: the first record is the header; a ragged row gets its error. */
export function csvRowShaper(
  width: number,
): (cells: string[], line: number) => InputRow | undefined {
  let index = -1;
  return (cells, line) => {
    if (index++ < 0) return undefined; // the header
    // Many exporters end each data row with a delimiter the header lacks (`1,2,3,4,`): empty
    // cells past the header's width hold nothing, so such a row is whole, not ragged.
    if (cells.length > width && onlyEmptyFrom(cells, width)) cells.length = width;
    const row: InputRow = { index: index - 1, line, cells };
    if (cells.length !== width) row.error = raggedMessage(width, cells);
    return row;
  };
}

function onlyEmptyFrom(cells: string[], start: number): boolean {
  for (let i = start; i < cells.length; i++) if (cells[i] !== '') return false;
  return true;
}

/**
 * "expected 8 cells, got 9": a row is written back with the header's width, so its extra cells
 * live only here, quoted and in full (cutting them would lose data).
 */
export function raggedMessage(width: number, cells: string[]): string {
  const base = `expected ${width} cells, got ${cells.length}`;
  if (cells.length < width) return base;
  const extra = cells
    .slice(width)
    .map((c) => JSON.stringify(c))
    .join(', ');
  return `${base} (extra: ${extra})`;
}
