/** What the start of a delimited text file says about its layout. */
export interface SniffedDialect {
  delimiter: string;
  /** 1-based physical line of the header row. */
  headerLine: number;
  /** True when the file starts with Excel's `sep=;` line. */
  sepLine: boolean;
  /** True when detection skipped lines above the header (notes, it judged): the caller says which line it took. */
  skippedLines?: true;
  /** Most rows below the header fill more cells than it names: this many (they are ragged rows). */
  widerRows?: number;
}

export interface SniffOptions {
  delimiter?: string;
  headerRow?: number;
  /** True when `text` is only the start of the file (its last record may be cut). */
  truncated?: boolean;
}

interface ScannedRecord {
  line: number;
  cells: number;
  /** Cells up to the last one holding more than spaces: a title Excel padded with delimiters fills 1. */
  filled: number;
  /** Holds an `@` or `://`: an email or URL is a value, never a column name. */
  values: boolean;
  blank: boolean;
}

const CANDIDATES = [',', ';', '\t', '|'];
const MAX_RECORDS = 60;
const SEP_LINE = /^"?sep=(.)"?[ \t]*$/i;

/** Guesses delimiter and header line from a decoded sample: the delimiter that splits the rows most consistently wins. */
export function sniffDialect(text: string, options: SniffOptions = {}): SniffedDialect {
  const firstBreak = text.search(/\r|\n/);
  const firstLine = firstBreak < 0 ? text : text.slice(0, firstBreak);
  const sep = SEP_LINE.exec(firstLine);
  const sepLine = sep !== null;
  const startLine = sepLine ? 2 : 1;
  const body = sepLine
    ? text.slice(firstBreak < 0 ? text.length : firstBreak).replace(/^(\r\n|\r|\n)/, '')
    : text;
  const forced = options.delimiter ?? sep?.[1];
  const candidates = forced ? [forced] : CANDIDATES;

  let best = { delimiter: candidates[0]!, cells: 1, score: -1, records: [] as ScannedRecord[] };
  for (const delimiter of candidates) {
    const records = scanRecords(body, delimiter, startLine, options.truncated ?? false);
    const cells = modalCells(records);
    const filled = records.filter((r) => !r.blank);
    const consistent = filled.filter((r) => r.cells === cells).length / Math.max(1, filled.length);
    const score = cells > 1 ? consistent : 0;
    if (score > best.score || (score === best.score && cells > best.cells && score > 0)) {
      best = { delimiter, cells, score, records };
    }
  }
  const headerLine = options.headerRow ?? findHeader(best.records, best.cells) ?? startLine;
  const skipped = options.headerRow === undefined && headerLine > startLine;
  const wider = widerRows(best.records, headerLine);
  return {
    delimiter: best.delimiter,
    headerLine,
    sepLine,
    ...(skipped ? { skippedLines: true } : {}),
    ...(wider ? { widerRows: wider } : {}),
  };
}

/** The cells most rows below the header fill, when more than half fill past its width. */
function widerRows(records: ScannedRecord[], headerLine: number): number | undefined {
  const header = records.find((r) => r.line === headerLine);
  const below = records.filter((r) => r.line > headerLine && !r.blank);
  if (!header) return undefined;
  const wider = below.filter((r) => r.filled > header.cells);
  return wider.length * 2 > below.length ? modalCells(wider) : undefined;
}

/**
 * The header is the first row nearly as wide as the table: a preamble of notes is narrower, while
 * data rows with a trailing empty cell may be a little wider than their header. Excel pads a title
 * block to the table's width (`Leads export,,,,`), so width counts the cells up to the last filled
 * one. Skipping rows for it must never eat data, so it takes a header that holds no email or URL,
 * above which rows fill at most half as much, and below which most rows fill more than any of them
 * (or none, under a note with text): a header with unnamed last columns, one of Excel's used range
 * (`Email,Name,,` over rows as narrow) or one with no names at all (`,,,`) stays the header.
 */
function findHeader(records: ScannedRecord[], cells: number): number | undefined {
  const rows = records.filter((r) => !r.blank);
  const wide = Math.max(2, Math.ceil(cells * 0.75));
  // A row narrower than the table still spans it when no row below holds anything past its
  // width: data rows that end with a delimiter the header lacks are wider only by empty cells.
  const asWide = rows.filter(
    (r, i) => cells <= 1 || r.cells >= wide || (r.cells >= 2 && fitsBelow(r, rows.slice(i + 1))),
  );
  const first = asWide[0];
  const header = asWide.find((r) => r.filled >= wide);
  if (!first || !header || header === first || header.values) return keepsData(rows, first);
  const notes = notesAbove(rows, header);
  const below = rows.filter((r) => r.line > header.line);
  const fuller = below.filter((r) => r.filled > notes).length;
  const table = below.length === 0 ? notes > 0 : fuller * 2 > below.length;
  return notes * 2 <= header.filled && table ? header.line : keepsData(rows, first);
}

/** The most cells any row above `r` fills. */
const notesAbove = (rows: ScannedRecord[], r: ScannedRecord): number =>
  Math.max(0, ...rows.filter((n) => n.line < r.line).map((n) => n.filled));

/**
 * `r`'s line, unless taking it as the header would skip rows that may be data: `r` holds an email
 * or URL, or a row above it fills more than half as much (a header with fewer names than its rows
 * have cells, over rows a note wider: the first row stays the header, its rows too wide).
 */
function keepsData(rows: ScannedRecord[], r: ScannedRecord | undefined): number | undefined {
  if (!r || r === rows[0]) return r?.line;
  return r.values || notesAbove(rows, r) * 2 > r.filled ? rows[0]?.line : r.line;
}

/** True when every row after `r` (at least one) fills no cell past `r`'s width. */
function fitsBelow(r: ScannedRecord, below: ScannedRecord[]): boolean {
  return (
    below.length > 0 &&
    below.every((b) => b.filled <= r.cells) &&
    below.some((b) => b.cells > r.cells)
  );
}

/** The most common cell count among non-blank records; ties go to the wider one (a preamble is narrower than the table). */
function modalCells(records: ScannedRecord[]): number {
  const counts = new Map<number, number>();
  for (const r of records) if (!r.blank) counts.set(r.cells, (counts.get(r.cells) ?? 0) + 1);
  let cells = 1;
  let seen = 0;
  for (const [c, n] of counts) {
    if (n > seen || (n === seen && c > cells)) {
      cells = c;
      seen = n;
    }
  }
  return cells;
}

/** Splits the sample into records the way a CSV parser would (quotes may span lines), counting cells only. */
function scanRecords(
  text: string,
  delimiter: string,
  firstLine: number,
  truncated: boolean,
): ScannedRecord[] {
  const records: ScannedRecord[] = [];
  let line = firstLine;
  let recordLine = line;
  let cells = 1;
  let filled = 0;
  let values = false;
  let empty = true;
  let inQuote = false;
  let fieldStart = true;
  for (let i = 0; i < text.length && records.length < MAX_RECORDS; i++) {
    const ch = text[i]!;
    if (ch === '@' || (ch === ':' && text[i + 1] === '/' && text[i + 2] === '/')) values = true;
    if (inQuote) {
      if (ch === '"') {
        if (text[i + 1] === '"') i++;
        else inQuote = false;
      } else if (ch === '\n' || (ch === '\r' && text[i + 1] !== '\n')) line++;
      continue;
    }
    if (ch === '"' && fieldStart) {
      inQuote = true;
      empty = false;
      filled = cells;
      fieldStart = false;
    } else if (ch === delimiter) {
      cells++;
      empty = false;
      fieldStart = true;
    } else if (ch === '\r' || ch === '\n') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      records.push({ line: recordLine, cells, filled, values, blank: empty });
      line++;
      recordLine = line;
      cells = 1;
      filled = 0;
      values = false;
      empty = true;
      fieldStart = true;
    } else {
      if (ch !== ' ' && ch !== '\t') {
        empty = false;
        filled = cells;
      }
      fieldStart = false;
    }
  }
  // The last record of a cut sample may be incomplete: count it only when the text is whole.
  if (!truncated && !empty && records.length < MAX_RECORDS) {
    records.push({ line: recordLine, cells, filled, values, blank: false });
  }
  return records;
}
