import { EnrichError } from '../errors.js';
import { uniqueHeader, widerRowsWarning } from './header.js';
import type { InputRow, InputSource, ReadOptions } from './read.js';
import { readXlsxRows, sheetSample, type SheetRow } from './read-xlsx.js';
import { raggedMessage } from './row-shape.js';
import { sniffDialect } from './sniff-dialect.js';

type Opened = Omit<InputSource, 'close'>;
type Base = Omit<Opened, 'dialect' | 'header' | 'rawHeader' | 'rows'>;

/**
 * An Excel workbook: one worksheet (the first visible one unless `--sheet` names another), its header
 * found as a CSV file's is (a title row above it is skipped), its cells read as the text a
 * user sees (dates as ISO 8601, ids and phones in full), and the typed values kept for an
 * `.xlsx` output. Rows are streamed again on every pass.
 */
export async function xlsxSource(
  base: Base,
  options: ReadOptions,
  verify: () => Promise<void>,
): Promise<Opened> {
  const { filePath, name, warnings } = base;
  // `--sheet 2`: the sheet named "2", or else the second visible one (`pickSheet`).
  const at = { name, sheet: options.sheet };
  const sample = await sheetSample(filePath, at);
  const hidden = sample.hiddenSkipped;
  if (hidden.length > 0) {
    const names = hidden.map((n) => JSON.stringify(n)).join(', ');
    const them = hidden.length > 1 ? 'the first' : 'it';
    warnings.push(
      `${name}: reading sheet ${JSON.stringify(sample.sheetName)}, the first visible one; hidden sheet(s) ${names} before it skipped (--sheet ${JSON.stringify(hidden[0])} reads ${them})`,
    );
  }
  const sniffed = sniffDialect(sample.text, { delimiter: ',', headerRow: options.headerRow });
  if (sniffed.skippedLines) {
    warnings.push(
      `${name}: row ${sniffed.headerLine} is taken as the header (the rows above it look like a title or notes); if the header is on another row, run again with --header-row <row>`,
    );
  }
  const headerLine = sniffed.headerLine;
  // The header is the row on that line: a blank one (not stored) is no header, and taking the
  // next row instead would read that row as the header and again as data below it.
  const onLine = (row: SheetRow | undefined) =>
    row === undefined ? undefined : row.line === headerLine ? row.cells : [];
  let rawHeader = onLine(sample.rows.find((r) => r.line >= headerLine));
  let lastLine = sample.rows.at(-1)?.line;
  // A --header-row below the sample: one more pass to reach it.
  for await (const row of rawHeader ? [] : readXlsxRows(filePath, at)) {
    lastLine = row.line;
    if (row.line < headerLine) continue;
    rawHeader = onLine(row);
    break;
  }
  if (!rawHeader || rawHeader.length === 0)
    throw noSheetHeader(name, sample, { headerLine, headerRow: options.headerRow, lastLine });
  const width = rawHeader.length;
  const wider = widerRowsWarning(name, 'row', sniffed, width);
  if (wider) warnings.push(wider);
  const below = sample.rows.filter((r) => r.line > headerLine);
  const uncalculated = uncalculatedWarning(name, rawHeader, below);
  if (uncalculated) warnings.push(uncalculated);
  // Formulas never calculated further down are told once, when a pass reaches the first.
  let told = uncalculated !== undefined;
  const header = rawHeader;
  const rows = async function* (): AsyncGenerator<InputRow> {
    await verify();
    let index = 0;
    for await (const row of readXlsxRows(filePath, at)) {
      if (row.line <= headerLine) continue;
      if (!told && row.uncalculated) {
        told = true;
        options.onWarning?.(uncalculatedWarning(name, header, [row]) as string);
      }
      if (row.cells.length === 0) continue; // a blank row (formatted, nothing in it)
      yield shapeSheetRow(row, width, index++);
    }
    await verify();
  };
  // Which sheet is part of the run's identity: two sheets of one workbook with the same header
  // are two runs (a run of one is never resumed for the other). The first sheet says nothing,
  // so the journals of earlier builds (which read it by default) still resume.
  const sheet = sample.sheetPosition === 1 ? {} : { sheet: sample.sheetName };
  return {
    ...base,
    identity: async () => ({ ...(await base.identity()), ...sheet }),
    dialect: { encoding: 'utf-8', bom: false, headerLine, sepLine: false },
    header: uniqueHeader(rawHeader),
    rawHeader,
    rows,
  };
}

/**
 * A sheet without a header row, said as it is (as `noHeaderRow` says it of a CSV): the sheet read
 * is empty (a cover sheet left before the data: the other sheets are named for `--sheet`), or
 * `--header-row` is past its last row. Never "an empty sheet" for a sheet that has rows.
 */
function noSheetHeader(
  name: string,
  sample: { sheetName: string; otherSheets: string[] },
  o: { headerLine: number; headerRow: number | undefined; lastLine: number | undefined },
): EnrichError {
  const sheet = JSON.stringify(sample.sheetName);
  const empty = o.lastLine === undefined;
  const past = o.headerRow !== undefined && o.lastLine !== undefined && o.headerRow > o.lastLine;
  const got = past
    ? `--header-row ${o.headerRow} is past the end of sheet ${sheet} (its last row is ${o.lastLine})`
    : empty
      ? `sheet ${sheet} is empty`
      : `row ${o.headerLine} of sheet ${sheet} names no column (it is blank)`;
  const others = sample.otherSheets.map((s) => `--sheet ${JSON.stringify(s)}`);
  const hint =
    !empty && o.headerRow !== undefined
      ? 'Give the row the column names are on (--header-row 1 is the first row), or leave --header-row out to let the header be found.'
      : others.length > 0
        ? `The workbook has other sheets: read one with ${others.join(' or ')}.`
        : 'Check that the right file was given.';
  return new EnrichError(
    'INPUT_INVALID',
    `${name} has no header row (a row naming the columns): ${got}`,
    {
      location: { file: name, line: o.headerLine },
      hint,
    },
  );
}

/**
 * The formulas the program that wrote the workbook never calculated, in the rows read at open
 * (the sample): they read as empty, as a spreadsheet opened without calculating would show them.
 * Undefined when there are none.
 */
export function uncalculatedWarning(
  name: string,
  header: string[],
  rows: SheetRow[],
): string | undefined {
  const found = rows.flatMap((row) =>
    (row.uncalculated ?? []).map(({ column, formula }) => ({ column, formula, line: row.line })),
  );
  const at = found[0];
  if (!at) return undefined;
  const columns = [...new Set(found.map((f) => f.column))].sort((a, b) => a - b);
  const named = columns.map((c) =>
    header[c] ? `${JSON.stringify(header[c])} (${letters(c)})` : letters(c),
  );
  const they = columns.length > 1 ? `columns ${named.join(', ')} hold` : `column ${named[0]} holds`;
  return `${name}: ${they} formulas the program that wrote the workbook never calculated (row ${at.line}: ${at.formula}): they read as empty; open and save the workbook in Excel or LibreOffice to calculate them, then run again`;
}

/** A 0-based column's letters as Excel shows them (0 → A, 26 → AA). */
function letters(column: number): string {
  let out = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26))
    out = String.fromCharCode(65 + ((n - 1) % 26)) + out;
  return out;
}

/** A sheet row aligned to the header: short rows padded (empty cells are not stored); a longer one is ragged. */
function shapeSheetRow(row: SheetRow, width: number, index: number): InputRow {
  const { cells, values } = row;
  const out: InputRow = { index, line: row.line, cells, values };
  if (cells.length > width) {
    out.error = raggedMessage(width, cells);
    return out;
  }
  while (cells.length < width) {
    cells.push('');
    values.push(null);
  }
  return out;
}
