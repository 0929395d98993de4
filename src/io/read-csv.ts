import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';
import { EnrichError } from '../errors.js';
import { MAX_RECORD_CHARS, nulError } from './limits.js';
import { openTextStream } from './text-stream.js';

/** One parsed record with the physical line it starts on. */
export interface CsvRecord {
  cells: string[];
  line: number;
}

export interface CsvReadOptions {
  name: string;
  encoding: string;
  bomLength: number;
  delimiter: string;
  /** 1-based line of the header: lines above it are skipped unparsed. */
  headerLine: number;
  /** The file has no CR at all: LF is the only line break to look for (a faster parse). */
  lfOnly?: boolean;
  /** Longest row accepted, in characters (a quote left open swallows the rest of the file). */
  maxRecordChars?: number;
  /** Called before the file is opened and after its last record: throws when the file is not the one first read. */
  verify?: () => Promise<void>;
}

/** Streams the records of a delimited file from its header line on, with 1-based start lines. */
export async function* readCsvRecords<T = CsvRecord>(
  filePath: string,
  options: CsvReadOptions,
  // Shaping rows here rather than in another async generator saves a promise per row.
  shape: (cells: string[], line: number) => T | undefined = (cells, line) => ({ cells, line }) as T,
): AsyncGenerator<T> {
  await options.verify?.();
  const skipped = options.headerLine - 1;
  // UTF-8 without a preamble goes to csv-parse as raw bytes: it decodes each field itself,
  // which saves decoding the whole text to a string only for csv-parse to re-encode it.
  const text =
    options.encoding === 'utf-8' && skipped === 0
      ? createReadStream(filePath, { start: options.bomLength, highWaterMark: 256 * 1024 })
      : openTextStream(filePath, {
          encoding: options.encoding,
          skipBytes: options.bomLength,
          skipLines: skipped,
        });
  const parser = parse({
    delimiter: options.delimiter,
    // Each record delimiter is compared at every byte: one instead of three saves ~5%.
    record_delimiter: options.lfOnly ? ['\n'] : ['\r\n', '\n', '\r'],
    relax_column_count: true,
    relax_quotes: true,
    max_record_size: options.maxRecordChars ?? MAX_RECORD_CHARS,
  });
  pipeline(text, parser, () => undefined);
  // A NUL anywhere refuses the file, not only in the sample the encoding was guessed from:
  // a memchr over each chunk as it flows past (UTF-8 bytes or decoded text alike).
  text.on('data', (chunk: Buffer | string) => {
    if (typeof chunk === 'string' ? chunk.includes('\0') : chunk.includes(0))
      parser.destroy(nulError(options.name, line));
  });
  // Lines are counted here rather than with csv-parse's `info` (a per-record object copy that
  // cost a third of the parse): a record spans 1 line plus the line breaks inside its quoted
  // cells, and blank lines come through as a single empty cell, which we skip but count.
  let line = skipped + 1;
  // Records are taken with read() while the parser has them, and awaited only when it
  // runs dry: the stream's async iterator cost a promise (and more) per record.
  const state: { ended: boolean; failure?: unknown; wake: () => void } = {
    ended: false,
    wake: () => undefined,
  };
  const wake = () => state.wake();
  parser.on('readable', wake);
  parser.on('end', () => {
    state.ended = true;
    wake();
  });
  parser.on('error', (err) => {
    state.failure = err;
    wake();
  });
  parser.on('close', () => {
    if (!state.ended) state.failure ??= new Error('the CSV stream closed before its end');
    wake();
  });
  try {
    for (;;) {
      const cells = parser.read() as string[] | null;
      if (cells === null) {
        if (state.failure !== undefined) throw state.failure;
        if (state.ended) break;
        await new Promise<void>((resolve) => (state.wake = resolve));
        continue;
      }
      const start = line;
      line++;
      if (cells.length === 1 && cells[0] === '') continue;
      for (const cell of cells) {
        if (cell.includes('\n') || cell.includes('\r')) line += lineBreaks(cell);
      }
      const item = shape(cells, start);
      if (item !== undefined) yield item;
    }
    await options.verify?.();
  } catch (err) {
    throw toInputError(
      err,
      options.name,
      skipped,
      line,
      options.maxRecordChars ?? MAX_RECORD_CHARS,
    );
  } finally {
    parser.destroy();
  }
}

/** Line breaks in a cell: CRLF, LF and CR each count once. */
function lineBreaks(s: string): number {
  const crlf = countOf(s, '\r\n');
  return countOf(s, '\n') + countOf(s, '\r') - crlf;
}

function countOf(s: string, needle: string): number {
  let n = 0;
  for (let i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Turns a csv-parse failure into an INPUT_INVALID error naming file, line and what was expected. */
function toInputError(
  err: unknown,
  file: string,
  skipped: number,
  nextLine: number,
  max: number,
): unknown {
  if (err instanceof EnrichError) return err;
  const e = err as Partial<CsvError> & { lines?: number };
  if (typeof e.code !== 'string' || !e.code.startsWith('CSV_')) {
    return new EnrichError('INPUT_UNREADABLE', `cannot read ${file}: ${(err as Error).message}`, {
      cause: err,
      location: { file },
    });
  }
  // An open quote is reported where the file ends; the row that opened it starts after the last good one.
  const openQuote = e.code === 'CSV_QUOTE_NOT_CLOSED' || e.code === 'CSV_MAX_RECORD_SIZE';
  const line = openQuote ? nextLine : typeof e.lines === 'number' ? e.lines + skipped : undefined;
  const messages: Record<string, string> = {
    CSV_QUOTE_NOT_CLOSED:
      'a quoted field is never closed: expected a closing " before the end of the file',
    CSV_MAX_RECORD_SIZE: `a row is longer than ${max} characters: expected at most ${max} characters per row (unless a cell really is that long, a quote is probably left open)`,
  };
  return new EnrichError('INPUT_INVALID', messages[e.code] ?? `malformed CSV: ${e.message}`, {
    cause: err,
    location: { file, line },
  });
}
