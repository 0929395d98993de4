import { EnrichError } from '../errors.js';
import {
  cellText,
  isoCellValue,
  isoDate,
  sheetValue,
  timeOnly,
  xlsxShownText,
  type SheetValue,
} from './xlsx-cells.js';
import { isPlainNumber, numberText, zeroPadded } from './xlsx-number-format.js';
import {
  dateCellText,
  openWorkbook,
  uncalculatedFormula,
  type ExcelRow,
  type OpenWorkbook,
} from './xlsx-zip.js';

/** One row of a worksheet: what a user sees in each cell, the typed values, and its row number. */
export interface SheetRow {
  cells: string[];
  values: SheetValue[];
  /** 1-based row number in the sheet (the "line" of messages). */
  line: number;
  /** Formulas the writing program never calculated (read as empty): 0-based column, formula. */
  uncalculated?: { column: number; formula: string }[];
}

/**
 * Which worksheet: its name, or its 1-based position among the tabs a user sees (hidden sheets
 * are not counted); the first visible sheet by default. A text of digits is a name first.
 */
export type SheetChoice = string | number;

const ZIP = [0x50, 0x4b, 0x03, 0x04];

/**
 * True when the first bytes are a ZIP archive holding a workbook: an Excel file whatever
 * its name. (A gzip file starts 1F 8B and is no ZIP: a `.csv.gz` is never taken for one.)
 */
export function looksLikeXlsx(sample: Uint8Array): boolean {
  if (!ZIP.every((b, i) => sample[i] === b)) return false;
  const names = Buffer.from(sample.buffer, sample.byteOffset, sample.length).toString('latin1');
  return names.includes('[Content_Types].xml') || names.includes('xl/');
}

interface Pickable {
  name: string;
  hidden?: boolean;
  /** A chart (or dialog) sheet: a tab with no cells, never the default and never read. */
  chart?: boolean;
}

/**
 * The sheet chosen: a name (exact, then in any case; a hidden sheet too, named so on purpose),
 * else a number as a 1-based position among the visible tabs, as Excel shows them: hidden
 * sheets are not counted. A sheet whose name is the text wins over a position: `--sheet 2024`
 * is the tab named "2024", and `--sheet 2` the tab named "2" when there is one, the second
 * visible tab otherwise.
 */
export function pickSheet<S extends Pickable>(sheets: S[], choice: SheetChoice): S | undefined {
  const visible = sheets.filter((s) => !s.hidden);
  if (typeof choice === 'number') return visible[choice - 1];
  const folded = choice.trim().toLowerCase();
  const named =
    sheets.find((s) => s.name === choice) ?? sheets.find((s) => s.name.toLowerCase() === folded);
  if (named || !/^\s*\d+\s*$/.test(choice)) return named;
  return visible[Number(choice) - 1];
}

/** The words of a sheet not found: what was asked, and what the workbook has. */
function noSheet(choice: SheetChoice, sheets: Pickable[]): string {
  const quoted = (hidden: boolean) =>
    sheets
      .filter((s) => !s.hidden === !hidden)
      .map((s) => JSON.stringify(s.name))
      .join(', ');
  const count = sheets.filter((s) => !s.hidden).length;
  const listed = quoted(false) || '(no visible sheets)';
  const numbers = count > 0 ? `, or a number from 1 to ${count}` : '';
  const hidden = quoted(true) ? ` (hidden, by name only: ${quoted(true)})` : '';
  if (typeof choice === 'number')
    return `no sheet number ${choice}: expected one of ${listed}${numbers}${hidden}`;
  if (/^\s*\d+\s*$/.test(choice))
    return `no sheet named ${JSON.stringify(choice)}, nor a sheet at that position: expected one of ${listed}${numbers}${hidden}`;
  return `no sheet ${JSON.stringify(choice)}: expected one of ${listed}${hidden}`;
}

/** The default sheet: the first visible one that holds cells (a chart tab first is passed over). */
export function firstDataSheet<S extends Pickable>(sheets: S[]): S | undefined {
  return sheets.find((s) => !s.hidden && !s.chart);
}

/** The hidden sheets before the default one: what the default choice passes over. */
export function hiddenBeforeFirst(sheets: Pickable[]): string[] {
  const first = sheets.findIndex((s) => !s.hidden && !s.chart);
  return sheets
    .slice(0, first === -1 ? sheets.length : first)
    .filter((s) => s.hidden)
    .map((s) => s.name);
}

/**
 * A row's cells as shown and as typed, from exceljs's 1-based sparse `values`. A number in a
 * zero-padding format is its text (`02134`), as typed too when zeros or words were added (an
 * `.xlsx` output keeps them; a number shown without them, `2134.60`, stays a number);
 * a date in a time-only format is a time (`18:00:00`); a date cell of ISO text (`t="d"`) a date
 * or a time. `date1904`: the workbook's date system.
 */
function shapeRow(row: ExcelRow, date1904: boolean): SheetRow {
  const raw = row.values;
  const width = Math.max(0, raw.length - 1);
  const cells = new Array<string>(width);
  const values = new Array<SheetValue>(width);
  let uncalculated: SheetRow['uncalculated'];
  for (let c = 1; c <= width; c++) {
    const v = raw[c];
    if (typeof v === 'number') {
      const numFmt = row.getCell(c).numFmt;
      const padded = numFmt ? zeroPadded(v, numFmt) : undefined;
      values[c - 1] = padded === undefined || isPlainNumber(padded) ? v : padded;
      cells[c - 1] = padded ?? numberText(v, numFmt);
      continue;
    }
    if (v instanceof Date) {
      const numFmt = row.getCell(c).numFmt;
      const time = numFmt ? timeOnly(v, numFmt, date1904) : undefined;
      values[c - 1] = time ?? v;
      cells[c - 1] = time ? time.text : isoDate(v);
      continue;
    }
    const formula = uncalculatedFormula(v);
    if (formula !== undefined) {
      values[c - 1] = null;
      cells[c - 1] = '';
      (uncalculated ??= []).push({ column: c - 1, formula });
      continue;
    }
    const iso = dateCellText(v);
    if (iso !== undefined) {
      const date = isoCellValue(iso);
      values[c - 1] = date ?? iso;
      cells[c - 1] = date ? cellText(date) : iso;
      continue;
    }
    const value = sheetValue(v);
    if (typeof value === 'string') {
      // Text as Excel shows it: `_x000D_` (how Excel stores a carriage return) is one.
      values[c - 1] = cells[c - 1] = xlsxShownText(value);
      continue;
    }
    values[c - 1] = value;
    cells[c - 1] = cellText(v);
  }
  // Cells styled but empty at the end of a row are no cells.
  while (cells.length > 0 && cells[cells.length - 1] === '') {
    cells.pop();
    values.pop();
  }
  return { cells, values, line: row.number, ...(uncalculated ? { uncalculated } : {}) };
}

/**
 * Streams the rows of one worksheet (the first visible one by default). The shared strings and
 * styles are held; the sheet's rows are read from the zip one at a time (`xlsx-zip.ts`). Every
 * call reads the file again.
 */
export async function* readXlsxRows(
  filePath: string,
  o: {
    name: string;
    sheet?: SheetChoice;
    hiddenSkipped?: (names: string[], read: string) => void;
    /**
     * The sheet read: its name and 1-based place in the workbook's list (hidden ones counted),
     * and the names of the workbook's other sheets that hold cells and are not hidden.
     */
    onSheet?: (sheet: { name: string; position: number; others: string[] }) => void;
  },
): AsyncGenerator<SheetRow> {
  let book: OpenWorkbook | undefined;
  try {
    book = await openWorkbook(filePath);
    const sheet =
      o.sheet === undefined ? firstDataSheet(book.sheets) : pickSheet(book.sheets, o.sheet);
    if (!sheet) throw sheetNotFound(o.name, o.sheet, book.sheets);
    if (sheet.chart) throw chartChosen(o.name, sheet.name);
    if (o.sheet === undefined) o.hiddenSkipped?.(hiddenBeforeFirst(book.sheets), sheet.name);
    const others = book.sheets.filter((s) => s !== sheet && !s.hidden && !s.chart);
    o.onSheet?.({ name: sheet.name, position: sheet.position, others: others.map((s) => s.name) });
    for await (const row of sheet.rows()) yield shapeRow(row, book.date1904);
  } catch (err) {
    if (err instanceof EnrichError) throw err;
    throw unreadableWorkbook(o.name, err);
  } finally {
    book?.close();
  }
}

/** A chart sheet named by --sheet: a tab with no cells. */
function chartChosen(name: string, sheet: string) {
  return new EnrichError(
    'USAGE',
    `${name}: sheet ${JSON.stringify(sheet)} is a chart sheet: it holds no cells to read`,
    { location: { file: name }, hint: 'Name a worksheet with --sheet <name|number>.' },
  );
}

/** A sheet asked for and not found; by default, a workbook without a visible sheet. */
function sheetNotFound(name: string, choice: SheetChoice | undefined, sheets: Pickable[]) {
  const location = { file: name };
  if (choice === undefined) {
    const charts = sheets.some((s) => s.chart && !s.hidden) ? 'chart sheets and ' : '';
    return new EnrichError(
      'INPUT_INVALID',
      `${name} has no visible sheet: expected a tab to read, got only ${charts}hidden ones (${sheets
        .map((s) => JSON.stringify(s.name))
        .join(', ')})`,
      { location, hint: 'Name the sheet to read with --sheet <name>.' },
    );
  }
  return new EnrichError('USAGE', `${name} has ${noSheet(choice, sheets)}`, {
    location,
    hint: 'Name the sheet with --sheet <name|number>.',
  });
}

/**
 * The first rows of the sheet as CSV text, one line per sheet row (gaps as blank lines):
 * the header is found by the same detection as a CSV file's, and its line is the row number;
 * and the hidden sheets the default choice passed over.
 */
export async function sheetSample(
  filePath: string,
  o: { name: string; sheet?: SheetChoice },
  maxRows = 60,
): Promise<{
  text: string;
  rows: SheetRow[];
  hiddenSkipped: string[];
  sheetName: string;
  /** 1-based place of the sheet read in the workbook's list of sheets (hidden ones counted). */
  sheetPosition: number;
  /** The workbook's other visible sheets that hold cells (what `--sheet` could read instead). */
  otherSheets: string[];
}> {
  const lines: string[] = [];
  const rows: SheetRow[] = [];
  let hiddenSkipped: string[] = [];
  let sheetName = '';
  let sheetPosition = 1;
  let otherSheets: string[] = [];
  let taken = 0;
  for await (const row of readXlsxRows(filePath, {
    ...o,
    hiddenSkipped: (names) => {
      hiddenSkipped = names;
    },
    onSheet: (sheet) => {
      sheetName = sheet.name;
      sheetPosition = sheet.position;
      otherSheets = sheet.others;
    },
  })) {
    rows.push(row);
    // Blank rows keep their lines (up to a point: a sheet may start far down).
    while (lines.length < row.line - 1 && lines.length < 10_000) lines.push('');
    lines.push(row.cells.map(quote).join(','));
    if (++taken >= maxRows) break;
  }
  return { text: lines.join('\n'), rows, hiddenSkipped, sheetName, sheetPosition, otherSheets };
}

/** A cell as a CSV field on one line: a line break inside a cell would shift the row numbers. */
function quote(cell: string): string {
  const flat = cell.replace(/\r\n|\r|\n/g, ' ');
  return /[",]/.test(flat) ? `"${flat.replace(/"/g, '""')}"` : flat;
}

/**
 * A workbook the reader failed on. exceljs needs every row and cell to carry its reference (the
 * `r` attribute, optional in the standard but written by Excel, LibreOffice and most libraries);
 * without them it fails inside itself ("Invalid Address: ANaN", or a TypeError), which is said
 * as a layout it cannot read, with what to do. A JavaScript error (a TypeError: "Cannot read
 * properties of undefined") says nothing to a user about the file: its words are left out.
 */
export function unreadableWorkbook(name: string, err: unknown): EnrichError {
  const message = String((err as Error | undefined)?.message ?? err);
  const internal =
    err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError;
  const layout = internal || /^Invalid Address/.test(message);
  return new EnrichError(
    'INPUT_UNREADABLE',
    layout
      ? `cannot read ${name} as a workbook: its sheet is laid out in a way the reader does not support, such as rows or cells without their reference (the "r" attribute)${internal ? '' : ` (${message})`}`
      : `cannot read ${name} as a workbook: ${message}`,
    {
      cause: err,
      location: { file: name },
      ...(layout
        ? {
            hint: 'Open it in Excel or LibreOffice and save it again as .xlsx, or export it as CSV.',
          }
        : {}),
    },
  );
}
