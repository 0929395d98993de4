import { EnrichError } from '../errors.js';
import type { SniffedDialect } from './sniff-dialect.js';

/**
 * Gives every header cell a unique, trimmed name; duplicates become "Email (2)", blanks "(column 3)".
 * A name the header really has is kept by its first column: a generated name skips it, so with
 * `Email,Email,Email (2)` the second `Email` is "Email (3)" and the file's own "Email (2)" stays
 * what `--map` and mapping files call it. Names compare case-insensitively.
 */
export function uniqueHeader(raw: readonly string[]): string[] {
  const trimmed = raw.map((cell) => cell.trim());
  const real = new Set(trimmed.filter((t) => t !== '').map((t) => t.toLowerCase()));
  const taken = new Set<string>();
  const names: string[] = [];
  trimmed.forEach((cell, i) => {
    const base = cell === '' ? `(column ${i + 1})` : cell;
    let name = base;
    if (taken.has(name.toLowerCase()) || (cell === '' && real.has(name.toLowerCase()))) {
      let n = 2;
      const free = (s: string) => !taken.has(s.toLowerCase()) && !real.has(s.toLowerCase());
      while (!free(`${base} (${n})`)) n++;
      name = `${base} (${n})`;
    }
    taken.add(name.toLowerCase());
    names.push(name);
  });
  return names;
}

/**
 * A CSV without a header row: an empty file, one of blank lines only, or a --header-row past
 * its end, each said as it is (a header-only file is fine: it has no rows).
 */
export function noHeaderRow(
  name: string,
  line: number,
  o: { headerRow?: number | undefined; text: string; truncated: boolean; bytes: number },
): EnrichError {
  const lines = o.truncated
    ? undefined
    : o.text.split(/\r\n|\r|\n/).length - (/[\r\n]$/.test(o.text) ? 1 : 0);
  let got: string;
  if (o.text.length === 0)
    got = o.bytes === 0 ? 'the file is empty (0 bytes)' : 'the file is empty';
  else if (o.headerRow !== undefined && (lines === undefined || o.headerRow > lines))
    got = `--header-row ${o.headerRow} is past the end of the file${lines === undefined ? '' : ` (it has ${lines} line${lines === 1 ? '' : 's'})`}`;
  else if (o.text.trim() === '') got = 'the file holds only blank lines';
  else got = `line ${line} names no column (it is blank)`;
  return new EnrichError(
    'INPUT_INVALID',
    `${name} has no header row (a line naming the columns): ${got}`,
    {
      location: { file: name, line },
      hint:
        o.headerRow === undefined
          ? 'An export with nothing in it has at least its header line; check that the right file was given.'
          : 'Give the line the column names are on (--header-row 1 is the first line), or leave --header-row out to let the header be found.',
    },
  );
}

/**
 * The warning for a header that names fewer columns than most rows below it fill (an export whose
 * last column has no name): those rows are ragged, so invalid, and the run says why at its start.
 */
export function widerRowsWarning(
  name: string,
  unit: 'line' | 'row',
  sniffed: Pick<SniffedDialect, 'headerLine' | 'widerRows'>,
  width: number,
): string | undefined {
  const cells = sniffed.widerRows;
  if (cells === undefined || cells <= width) return undefined;
  return `${name}: the header (${unit} ${sniffed.headerLine}) names ${width} column${width === 1 ? '' : 's'}, but most rows below it have ${cells} cells: those rows are invalid ("expected ${width} cells"), their extra cells kept in enrich_error; name every column in the header ${unit} and run again`;
}
