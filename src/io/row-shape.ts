import type { InputRow } from './read.js';

/** Shapes CSV records into InputRows: the first record is the header; a ragged row gets its error. */
export function csvRowShaper(
  rawHeader: readonly string[],
): (cells: string[], line: number) => InputRow | undefined {
  const width = rawHeader.length;
  const named = namedWidth(rawHeader);
  let index = -1;
  return (cells, line) => {
    if (index++ < 0) return undefined; // the header
    // Many exporters end each data row with a delimiter the header lacks (`1,2,3,4,`): empty
    // cells past the header's width hold nothing, so such a row is whole, not ragged.
    if (cells.length > width && onlyEmptyFrom(cells, width)) cells.length = width;
    // And the other way round: a header ending in unnamed columns (`Email,Company,,`) over rows
    // that stop after the named ones. The cells they leave out hold nothing: empty, not ragged.
    while (cells.length < width && cells.length >= named) cells.push('');
    const row: InputRow = { index: index - 1, line, cells };
    if (cells.length !== width) row.error = raggedMessage(width, cells);
    return row;
  };
}

/** How many columns up to the header's last named one (a name of only spaces names nothing). */
function namedWidth(rawHeader: readonly string[]): number {
  let n = rawHeader.length;
  while (n > 0 && rawHeader[n - 1]!.trim() === '') n--;
  return n;
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
