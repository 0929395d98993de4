/**
 * CSV lines written by hand, exactly as csv-stringify writes them with our options
 * (a cell is quoted when it holds the delimiter, a double quote, CR or LF; quotes are
 * doubled; no other change). Calling csv-stringify per row re-normalised its options
 * every time and cost more than the rest of the writer; test/io/csv-line.test.ts
 * checks the two agree.
 */

/** Returns one CSV line, line break included, of string cells. */
export function csvLine(cells: readonly string[], delimiter: string): string {
  let out = '';
  for (let i = 0; i < cells.length; i++) {
    if (i > 0) out += delimiter;
    out += csvCell(cells[i] as string, delimiter);
  }
  return `${out}\n`;
}

/** One cell, quoted when it must be. */
export function csvCell(value: string, delimiter: string): string {
  const quote =
    value.includes('"') ||
    value.includes(delimiter) ||
    value.includes('\n') ||
    value.includes('\r');
  if (!quote) return value;
  return `"${value.includes('"') ? value.replaceAll('"', '""') : value}"`;
}
