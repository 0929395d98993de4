import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { EnrichError } from '../errors.js';
import { stringify } from 'csv-stringify/sync';
import { escapeFormula, type FormulaEscape } from './formula-escape.js';
import { removeStaleTemps, tempNameFor } from './stale-temps.js';
import type { FileFormat } from './file-format.js';
import type { InputRow } from './read.js';

export type RowStatus = 'enriched' | 'failed' | 'invalid' | 'missing' | 'expired';

/** The status columns every CSV/TSV output carries after the input columns. */
export const STATUS_COLUMNS = ['enrich_status', 'enrich_error', 'enrich_credit_charged'] as const;

export interface OutputWriterOptions {
  /** A path, or '-' for stdout. */
  target: string;
  format: FileFormat;
  /** Header cells exactly as read (written back as the first columns). */
  inputHeader: string[];
  /** Unique names for the JSON `input` object keys. */
  jsonKeys: string[];
  /** Columns after the status columns (enriched fields, `enrich_match_rank`...); may start with STATUS_COLUMNS. */
  extraColumns: string[];
  delimiter?: string;
  bom?: boolean;
  formulaEscape?: FormulaEscape;
  /** JSON key of the record: `record` (contacts) or `records` (companies). */
  recordKey?: 'record' | 'records';
  /** Stream for '-' (defaults to process.stdout). */
  stdout?: Writable;
}

/** One output row: an input row, its status, and the values of the extra columns. */
export interface OutputRow {
  /** 1-based row number (JSON `row`). */
  row: number;
  input: InputRow;
  status: RowStatus;
  error: string;
  creditCharged: boolean | null;
  /** Aligned to the extra columns that follow the status columns. */
  values: (string | number | boolean | null)[];
  /** JSON output: the record (contacts) or records array (companies). */
  record?: unknown;
}

export interface OutputWriter {
  write(row: OutputRow): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

type Cell = string | number | boolean | null | undefined;
const text = (v: Cell) =>
  v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? 'true' : 'false') : String(v);

/**
 * Refuses an output path that names a directory: the rename at the end would fail with
 * EISDIR after the whole run (and its credits). A bulk run checks its targets before its
 * first request; the writer checks again when it opens.
 */
export async function checkOutputTarget(target: string): Promise<void> {
  if (target === '-') return;
  const info = await stat(target).catch(() => undefined);
  if (info?.isDirectory()) {
    throw new EnrichError('USAGE', `cannot write ${target}: it is a directory`, {
      hint: `Name a file in it, for example -o ${join(target, 'enriched.csv')}`,
      location: { file: target },
    });
  }
}

/** Opens an output writer: CSV/TSV (csv-stringify) or JSON/JSONL, to a temp file renamed into place on close. */
export async function createOutputWriter(options: OutputWriterOptions): Promise<OutputWriter> {
  await checkOutputTarget(options.target);
  const toStdout = options.target === '-';
  const finalPath = toStdout ? '' : resolve(options.target);
  const tempPath = toStdout
    ? ''
    : join(
        dirname(finalPath),
        tempNameFor(basename(finalPath), process.pid, randomBytes(4).toString('hex')),
      );
  let file: WriteStream | undefined;
  if (!toStdout) {
    await removeStaleTemps(dirname(finalPath), basename(finalPath));
    file = createWriteStream(tempPath, { flags: 'wx', mode: 0o644 });
    await new Promise<void>((ok, fail) => {
      file!.once('open', () => ok());
      file!.once('error', (err) =>
        fail(
          new EnrichError('USAGE', `cannot write ${options.target}: ${err.message}`, {
            cause: err,
            location: { file: options.target },
          }),
        ),
      );
    });
  }
  const out: Writable = file ?? options.stdout ?? process.stdout;
  let failed: Error | undefined;
  out.on('error', (err) => (failed = err));
  const sink =
    options.format === 'csv' || options.format === 'tsv'
      ? csvSink(options, out)
      : jsonSink(options, out);

  return {
    async write(row) {
      if (failed) throw failed;
      await sink.write(row);
    },
    async close() {
      await sink.end();
      if (failed) throw failed;
      if (!file) return;
      await new Promise<void>((ok, fail) =>
        file!.end((err?: Error | null) => (err ? fail(err) : ok())),
      );
      const fh = await open(tempPath, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tempPath, finalPath);
    },
    async abort() {
      if (!file) return;
      file.destroy();
      await rm(tempPath, { force: true });
    },
  };
}

interface Sink {
  write(row: OutputRow): Promise<void>;
  /** Flushes everything written; never ends `out` itself (the caller may still need it). */
  end(): Promise<void>;
}

/** Resolves once `stream` can take more, or at once when it can already. */
function drained(stream: Writable, wrote: boolean): Promise<void> | undefined {
  return wrote ? undefined : new Promise<void>((ok) => stream.once('drain', ok));
}

/**
 * CSV/TSV through csv-stringify, rows gathered in blocks of 500: one call per row cost
 * more than the row (the library normalises its options on every call), one stream
 * write per row cost a callback and often an await.
 */
function csvSink(o: OutputWriterOptions, out: Writable): Sink {
  const cells = csvCells(o);
  const options = {
    delimiter: o.delimiter ?? (o.format === 'tsv' ? '\t' : ','),
    record_delimiter: '\n',
    // A lone CR (or LF) inside a cell must be quoted too, or a reader would split the row
    // there: csv-stringify's own check for them (two indexOf) rather than a RegExp per cell.
    quote_record_delimiter: true,
  };
  let block: string[][] = [cells.header];
  let first = true;
  const flush = async () => {
    const text = stringify(block, { ...options, bom: first && o.bom === true });
    first = false;
    block = [];
    await drained(out, out.write(text));
  };
  return {
    async write(row) {
      block.push(cells.row(row));
      if (block.length >= 500) await flush();
    },
    async end() {
      await flush();
    },
  };
}

/** JSON (one array) or JSON Lines, gathered into ~64 KiB chunks: a stream write per row cost more than the row. */
function jsonSink(o: OutputWriterOptions, out: Writable): Sink {
  const encode = jsonEncoder(o);
  let first = true;
  let pending = '';
  const put = async (chunk: string) => {
    await drained(out, out.write(chunk));
  };
  return {
    async write(row) {
      pending += encode.row(row, first);
      first = false;
      if (pending.length >= 65_536) {
        const chunk = pending;
        pending = '';
        await put(chunk);
      }
    },
    async end() {
      await put(pending + encode.end(first));
      pending = '';
    },
  };
}

interface Encoder {
  row(row: OutputRow, first: boolean): string;
  end(first: boolean): string;
}

function jsonEncoder(o: OutputWriterOptions): Encoder {
  const key = o.recordKey ?? 'record';
  const json = (r: OutputRow) =>
    JSON.stringify({
      row: r.row,
      input:
        r.input.value !== undefined
          ? r.input.value
          : Object.fromEntries(o.jsonKeys.map((k, i) => [k, r.input.cells[i] ?? ''])),
      status: r.status,
      error: r.error === '' ? null : r.error,
      credit_charged: r.creditCharged,
      [key]: r.record ?? (key === 'records' ? [] : null),
    });
  if (o.format === 'jsonl') return { row: (r) => `${json(r)}\n`, end: () => '' };
  return {
    row: (r, first) => `${first ? '[\n' : ',\n'}${json(r)}`,
    end: (first) => (first ? '[]\n' : '\n]\n'),
  };
}

/** The header and the cells of each row of a CSV/TSV output. */
function csvCells(o: OutputWriterOptions): { header: string[]; row(r: OutputRow): string[] } {
  const mode = o.formulaEscape ?? 'auto';
  const width = o.inputHeader.length;
  // Callers may list the status columns themselves or leave them to the writer: either way they appear once.
  const withStatus = STATUS_COLUMNS.every((c, i) => o.extraColumns[i] === c);
  const tail = withStatus ? o.extraColumns.slice(STATUS_COLUMNS.length) : o.extraColumns;
  return {
    header: [...o.inputHeader, ...STATUS_COLUMNS, ...tail],
    row(r) {
      // One array filled in place: this runs for every row of the output.
      const out = new Array<string>(width + STATUS_COLUMNS.length + tail.length);
      // Input cells go back exactly as read; a ragged row is aligned (its error names any extra cells).
      const input = r.input.cells;
      for (let i = 0; i < width; i++) out[i] = input[i] ?? '';
      out[width] = r.status;
      out[width + 1] = escapeFormula(r.error, r.status === 'invalid' ? 'never' : mode);
      out[width + 2] = text(r.creditCharged);
      // Missing trailing values (a row with no record) are empty cells: every row has every column.
      for (let j = 0, at = width + STATUS_COLUMNS.length; j < tail.length; j++) {
        const v = r.values[j];
        out[at + j] = typeof v === 'string' ? escapeFormula(v, mode) : text(v);
      }
      return out;
    },
  };
}
