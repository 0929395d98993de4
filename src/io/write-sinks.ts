import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { escapeFormula } from './formula-escape.js';
import { stringifyExact } from './json-exact.js';
import { STATUS_COLUMNS, type OutputRow, type OutputWriterOptions } from './write-types.js';

type Cell = string | number | boolean | null | undefined;
const text = (v: Cell) =>
  v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? 'true' : 'false') : String(v);

/** Turns output rows into text on a stream. */
export interface Sink {
  write(row: OutputRow): Promise<void>;
  /** Hands `out` the rows gathered so far (a text sink gathers them in blocks), now. */
  flush?(): Promise<void>;
  /** Flushes everything written; never ends `out` itself (the caller may still need it). */
  end(): Promise<void>;
}

/**
 * Resolves once `stream` can take more (at once when it can already); rejects as soon as
 * it errors or closes: a stream that failed (disk full, EPIPE) never emits `drain`.
 */
export function drained(stream: Writable, wrote: boolean): Promise<void> | undefined {
  if (wrote) return undefined;
  return new Promise<void>((ok, fail) => {
    if (stream.errored || stream.destroyed) {
      fail(stream.errored ?? new Error('the output stream was closed'));
      return;
    }
    const done = (err?: Error) => {
      stream.off('drain', onDrain);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (err) fail(err);
      else ok();
    };
    const onDrain = () => done();
    const onError = (err: Error) => done(err);
    const onClose = () => done(stream.errored ?? new Error('the output stream was closed'));
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Cells gathered before each csv-stringify call: about 100 rows of a usual output (35-40
 * columns), fewer of a wide one. One call per row cost more than the row (the library
 * normalises its options on every call), and one stream write per row a callback and often
 * an await; but a block's rows wait for it in memory, and blocks of 500 rows lived long
 * enough for the GC to copy and promote them: 100 rows cut a 100k-row run's CPU by 8-10%
 * against 500 (and by more against 2,000; 20 was slower again; BENCHMARKS.md, session 14).
 */
export const BLOCK_CELLS = 4_000;

/** CSV/TSV through csv-stringify, rows gathered in blocks of BLOCK_CELLS cells. */
export function csvSink(o: OutputWriterOptions, out: Writable): Sink {
  const cells = csvCells(o);
  const options = {
    delimiter: o.delimiter ?? (o.format === 'tsv' ? '\t' : ','),
    record_delimiter: '\n',
    // A lone CR (or LF) inside a cell must be quoted too, or a reader would split the row
    // there: csv-stringify's own check for them (two indexOf) rather than a RegExp per cell.
    quote_record_delimiter: true,
  };
  let block: string[][] = [cells.header];
  let blockCells = 0;
  let first = true;
  const flush = async () => {
    let text = stringify(block, { ...options, bom: first && o.bom === true && !o.sepLine });
    if (first && o.sepLine)
      text = `${o.bom === true ? '\ufeff' : ''}sep=${options.delimiter}\n${text}`;
    first = false;
    block = [];
    blockCells = 0;
    await drained(out, out.write(text));
  };
  return {
    async write(row) {
      const c = cells.row(row);
      block.push(c);
      blockCells += c.length;
      if (blockCells >= BLOCK_CELLS) await flush();
    },
    async flush() {
      if (block.length > 0) await flush();
    },
    async end() {
      await flush();
    },
  };
}

/** JSON (one array) or JSON Lines, gathered into ~64 KiB chunks: a stream write per row cost more than the row. */
export function jsonSink(o: OutputWriterOptions, out: Writable): Sink {
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
      // Stryker disable next-line ConditionalExpression,EqualityOperator: when a chunk is written changes the chunks, not the text
      if (pending.length >= 65_536) {
        const chunk = pending;
        pending = '';
        await put(chunk);
      }
    },
    async flush() {
      if (pending === '') return;
      const chunk = pending;
      pending = '';
      await put(chunk);
    },
    async end() {
      await put(pending + encode.end(first));
      // Stryker disable next-line StringLiteral: nothing is written after end
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
  // The input part goes through stringifyExact: numbers are written back as they were written.
  const json = (r: OutputRow) =>
    `{"row":${r.row},${o.jsonLine ? `"line":${r.input.line},` : ''}"input":${
      r.input.value !== undefined
        ? stringifyExact(r.input.value)
        : JSON.stringify(Object.fromEntries(o.jsonKeys.map((k, i) => [k, r.input.cells[i] ?? ''])))
    },${JSON.stringify({
      status: r.status,
      error: r.error === '' ? null : r.error,
      credit_charged: r.creditCharged,
      cached_at: r.cachedAt ?? null,
      [key]: r.record ?? (key === 'records' ? [] : null),
    }).slice(1)}`;
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
      // Stryker disable next-line ArrayDeclaration,ArithmeticOperator: the size only preallocates; every cell is set below
      const out = new Array<string>(width + STATUS_COLUMNS.length + tail.length);
      // Input cells go back exactly as read; a ragged row is aligned (its error names any extra cells).
      const input = r.input.cells;
      // Stryker disable next-line EqualityOperator: cell `width` is the status, set right after
      for (let i = 0; i < width; i++) out[i] = input[i] ?? '';
      out[width] = r.status;
      out[width + 1] = escapeFormula(r.error, r.status === 'invalid' ? 'never' : mode);
      out[width + 2] = text(r.creditCharged);
      out[width + 3] = r.cachedAt ?? '';
      // Missing trailing values (a row with no record) are empty cells: every row has every column.
      for (let j = 0, at = width + STATUS_COLUMNS.length; j < tail.length; j++) {
        const v = r.values[j];
        out[at + j] = typeof v === 'string' ? escapeFormula(v, mode) : text(v);
      }
      return out;
    },
  };
}
