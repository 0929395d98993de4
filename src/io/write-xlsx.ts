import { PassThrough, type Writable } from 'node:stream';
import { drained, type Sink } from './write-sinks.js';
import { STATUS_COLUMNS, type OutputRow, type OutputWriterOptions } from './write-types.js';
import { SheetTime, xlsxStoredText, type SheetValue } from './xlsx-cells.js';

type Value = string | number | boolean | null | undefined | 'unknown';
const text = (v: Value) =>
  v === null || v === undefined
    ? null
    : typeof v === 'boolean'
      ? v
        ? 'true'
        : 'false'
      : xlsxStoredText(String(v));
/** A cell as stored: text with OOXML's escapes (a carriage return kept), anything else as it is. */
const stored = <T>(v: T): T | string => (typeof v === 'string' ? xlsxStoredText(v) : v);

interface SheetWriter {
  addRow(values: unknown[]): {
    commit(): void;
    getCell(col: number): { numFmt?: string };
  };
}

/**
 * A date cell keeps a date format, a time cell a time format (an input cell's own format is
 * not carried over).
 */
function dateFormat(d: Date | SheetTime): string {
  if (d instanceof SheetTime) return d.elapsed ? '[h]:mm:ss' : 'hh:mm:ss';
  return d.getTime() % 86_400_000 === 0 ? 'yyyy-mm-dd' : 'yyyy-mm-dd hh:mm:ss';
}

/**
 * An `.xlsx` workbook streamed by exceljs's WorkbookWriter: a header row, then every input
 * column with its original cell values (an XLSX input's numbers, dates, times and booleans as
 * such, a zero-padded number as its text; other inputs' cells as text, so leading zeros stay), then the status and enrichment
 * columns as text cells. No formula escaping: a text cell (`t="inlineStr"`) is never
 * evaluated, whatever it starts with; a formula exists only as an `<f>` element, which this
 * writer never writes.
 */
export async function xlsxSink(o: OutputWriterOptions, out: Writable): Promise<Sink> {
  const { default: ExcelJS } = await import('exceljs');
  // exceljs ends the stream it writes to; `out` may be stdout, ended by its owner.
  const zip = new PassThrough();
  zip.pipe(out, { end: false });
  // A pipe stops at an error of `out` and the zip would then wait for ever for a reader (a
  // full disk hung the run at close): it fails with `out`.
  out.once('error', (err) => zip.destroy(err));
  const ended = new Promise<void>((ok, fail) => {
    zip.on('end', ok);
    zip.on('error', fail);
  });
  ended.catch(() => undefined); // a failure mid-commit also reaches the caller through `out`
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: zip,
    useSharedStrings: false,
    useStyles: true,
  });
  const sheet = book.addWorksheet(o.sheetName ?? 'Enriched') as unknown as SheetWriter;
  const width = o.inputHeader.length;
  const withStatus = STATUS_COLUMNS.every((c, i) => o.extraColumns[i] === c);
  const tail = withStatus ? o.extraColumns.slice(STATUS_COLUMNS.length) : o.extraColumns;
  sheet.addRow([...o.inputHeader, ...STATUS_COLUMNS, ...tail].map(xlsxStoredText)).commit();
  let rows = 0;
  return {
    async write(r: OutputRow) {
      const cells = new Array<unknown>(width + STATUS_COLUMNS.length + tail.length);
      const typed = r.input.values;
      const dates: [number, Date | SheetTime][] = [];
      for (let i = 0; i < width; i++) {
        const v: SheetValue | undefined = typed ? typed[i] : (r.input.cells[i] ?? '');
        cells[i] = v === '' ? null : stored(v);
        if (v instanceof Date) dates.push([i, v]);
        else if (v instanceof SheetTime) {
          cells[i] = v.days;
          dates.push([i, v]);
        }
      }
      cells[width] = r.status;
      cells[width + 1] = r.error === '' ? null : xlsxStoredText(r.error);
      cells[width + 2] = text(r.creditCharged);
      cells[width + 3] = r.cachedAt ?? null;
      const at = width + STATUS_COLUMNS.length;
      for (let j = 0; j < tail.length; j++) cells[at + j] = text(r.values[j]);
      const row = sheet.addRow(cells);
      for (const [i, v] of dates) row.getCell(i + 1).numFmt = dateFormat(v);
      row.commit();
      // exceljs has no backpressure of its own: every 1000 rows, wait for the file to catch up.
      if (++rows % 1000 === 0) await drained(out, out.writableLength < out.writableHighWaterMark);
    },
    async end() {
      await book.commit();
      await ended;
    },
  };
}
