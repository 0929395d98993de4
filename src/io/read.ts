import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import iconv from 'iconv-lite';
import { EnrichError } from '../errors.js';
import {
  assertEncodingFits,
  assertNotBinary,
  canonicalEncoding,
  detectEncoding,
  holdsUtf8Characters,
  isUtf8,
} from './detect-encoding.js';
import { noHeaderRow, uniqueHeader, widerRowsWarning } from './header.js';
import { formatOfExtension } from './file-format.js';
import { checkPin, pinFile, type FileId } from './input-pin.js';
import { formatOf, readSample, scanFile, type InputFormat } from './inspect-file.js';
import { readCsvRecords } from './read-csv.js';
import {
  jsonCell,
  nestedCells,
  ownValue,
  readJsonArray,
  readJsonLines,
  type JsonRecord,
} from './read-json.js';
import { csvRowShaper } from './row-shape.js';
import { sniffDialect } from './sniff-dialect.js';
import { gunzipToFile, isGzip, spoolToFile, type Spool } from './spool-stdin.js';
import { looksLikeXlsx } from './read-xlsx.js';
import type { SheetValue } from './xlsx-cells.js';
import { xlsxSource } from './xlsx-source.js';

export type { InputFormat } from './inspect-file.js';

export interface ReadOptions {
  format?: InputFormat;
  delimiter?: string;
  encoding?: string;
  /** 1-based line of the header row (skips a preamble the detection did not see). */
  headerRow?: number;
  stdin?: NodeJS.ReadableStream;
  tmpDir?: string;
  /** Longest CSV row or JSON record accepted, in characters (default 8 MiB). */
  maxRecordChars?: number;
  /** XLSX: the worksheet, by name or 1-based position among the visible sheets ("2" is the sheet named "2", else the second visible one); the first visible one by default. */
  sheet?: string | number;
  /**
   * Told of what a pass over the rows finds that the file's opening could not see (`warnings`
   * holds what it saw): a workbook's formula never calculated, below the rows read at open.
   */
  onWarning?: (message: string) => void;
}

export interface InputDialect {
  delimiter?: string;
  encoding: string;
  bom: boolean;
  headerLine: number;
  sepLine: boolean;
}

/** One data row of the input. */
export interface InputRow {
  /** 0-based data row number (header excluded). */
  index: number;
  /** 1-based physical line where the row starts. */
  line: number;
  /** Cells exactly as read (JSON: values stringified); a ragged row keeps the cells it had. */
  cells: string[];
  /** JSON/JSONL: the original object (a number a JS number would change is a JsonNumber holding its text). */
  value?: unknown;
  /** XLSX: the cells' typed values (numbers, dates, booleans), written back as such to an `.xlsx` output. */
  values?: SheetValue[];
  /** JSON/JSONL: true for each cell that holds an object or array (its JSON text is no name or address); absent when none does. */
  nested?: boolean[];
  /** Why the row cannot be used (ragged row): it becomes `invalid`, never fatal. */
  error?: string;
}

/** What a run's input is, for its journal: the file's real path, size and SHA-256 (and sheet). */
export interface InputIdentity {
  path: string;
  size: number;
  sha256: string;
  /** The worksheet read, when it is not the workbook's first sheet. */
  sheet?: string;
  /** The text's encoding, when it is not UTF-8. */
  encoding?: string;
}

/** An opened input file: its layout, header, and rows that can be streamed any number of times. */
export interface InputSource {
  name: string;
  filePath: string;
  format: InputFormat;
  dialect: InputDialect;
  header: string[];
  rawHeader: string[];
  rows(): AsyncIterable<InputRow>;
  /** What the caller should tell the user about how the file was read (no action needed to go on). */
  warnings: string[];
  /**
   * For the resume journal: real path ('-' for stdin or a pipe), size and streamed SHA-256; for
   * a workbook, the sheet read when it is not the first one.
   */
  identity(): Promise<InputIdentity>;
  /** The file read (real path, device, inode); undefined for stdin or a pipe (read from a private copy). */
  file?: FileId;
  close(): Promise<void>;
}

/** Opens a CSV/TSV/JSON/JSONL file (or '-' for stdin): detects encoding, format, delimiter and header. */
export async function openInput(source: string, options: ReadOptions = {}): Promise<InputSource> {
  let spool: Spool | undefined;
  if (source === '-') {
    const stdin = options.stdin ?? process.stdin;
    // Nothing piped in: reading would wait forever for the user to type a CSV.
    if ((stdin as { isTTY?: boolean }).isTTY) {
      throw new EnrichError('USAGE', 'input "-" reads stdin, but nothing is piped in', {
        hint: 'Pipe a file in (cat leads.csv | enrich contacts -) or name the file.',
      });
    }
    spool = await spoolToFile(stdin, options.tmpDir);
  } else if (await isPipe(source)) {
    // A FIFO or <(cmd) can be read once only: copied first, like stdin, then read from the copy.
    spool = await spoolToFile(() => createReadStream(source), options.tmpDir);
  }
  const name = source;
  // A gzip file (`leads.csv.gz`, or gzipped stdin) is read from a private uncompressed copy: every
  // pass then reads plain bytes; the run's identity stays the file's path, its file id the input's.
  let origin: FileId | undefined;
  const compressed = spool ? spool.filePath : resolve(source);
  if (await isGzip(compressed)) {
    if (!spool) origin = await pinFile(compressed, Buffer.alloc(0)).then((p) => p.id);
    const plain = await gunzipToFile(name, compressed, options.tmpDir).finally(() =>
      spool?.remove(),
    );
    spool = plain;
  }
  const filePath = spool ? spool.filePath : resolve(source);
  try {
    const opened = await inspect(name, filePath, options, spool !== undefined, origin);
    return { ...opened, close: async () => spool?.remove() };
  } catch (err) {
    await spool?.remove();
    throw err;
  }
}

/** A FIFO (or a process substitution's pipe); a device is refused: it is no file to read rows from. */
async function isPipe(source: string): Promise<boolean> {
  const info = await stat(source).catch(() => undefined);
  if (info?.isCharacterDevice() || info?.isBlockDevice()) {
    throw new EnrichError('USAGE', `cannot read ${source}: it is a device, not a file`, {
      location: { file: source },
      hint: 'Name a CSV, TSV, JSON or JSON Lines file, or pipe one in as "-".',
    });
  }
  return info?.isFIFO() === true || info?.isSocket() === true;
}

async function inspect(
  name: string,
  filePath: string,
  options: ReadOptions,
  spooled: boolean,
  origin?: FileId,
): Promise<Omit<InputSource, 'close'>> {
  if (options.encoding && !iconv.encodingExists(canonicalEncoding(options.encoding))) {
    throw new EnrichError(
      'USAGE',
      `unknown encoding "${options.encoding}": expected e.g. utf-8, utf-16le, utf-16be, windows-1252`,
    );
  }
  const { sample, size } = await readSample(name, filePath);
  // Every pass over the rows checks it still reads this file, with these bytes.
  const pin = await pinFile(filePath, sample);
  const verify = () => checkPin(name, filePath, pin);
  const truncated = size > sample.length;
  // One read of the whole file answers every question the sample cannot, and the run's identity.
  let scanned: ReturnType<typeof scanFile> | undefined;
  const scan = () => (scanned ??= scanFile(filePath));
  // A spool's path changes every run: stdin's (or a pipe's) identity is '-' plus its content hash.
  // A file's is its real path: the same file through a symlinked directory is the same run.
  const identify = async () => {
    const { size, sha256 } = await scan();
    await verify();
    return { path: origin?.realPath ?? (spooled ? '-' : pin.id.realPath), size, sha256 };
  };
  const file = origin ?? (spooled ? undefined : pin.id);
  const workbook = looksLikeXlsx(sample);
  if (workbook || options.format === 'xlsx' || formatOfExtension(name) === 'xlsx') {
    if (!workbook) throw notAWorkbook(name);
    const base = {
      name,
      filePath,
      format: 'xlsx' as const,
      warnings: [] as string[],
      identity: identify,
    };
    return xlsxSource({ ...base, ...(file ? { file } : {}) }, options, verify);
  }
  let enc = detectEncoding(sample, truncated, options.encoding);
  if (
    truncated &&
    !options.encoding &&
    !enc.bom &&
    enc.encoding === 'utf-8' &&
    !(await scan()).utf8
  ) {
    enc = { encoding: 'windows-1252', bom: false, bomLength: 0 };
  }
  const warnings = await encodingWarnings(name, enc, {
    sample,
    truncated,
    scan,
    forced: options.encoding,
  });
  if (options.encoding) assertEncodingFits(sample, enc, options.encoding, name);
  assertNotBinary(sample, enc.encoding, name);
  const text = iconv.decode(
    sample.subarray(
      enc.bomLength,
      sample.length -
        ((sample.length - enc.bomLength) % (enc.encoding.startsWith('utf-16') ? 2 : 1)),
    ),
    enc.encoding,
    { stripBOM: false },
  );
  const format = options.format ?? formatOf(name, text);
  warnings.push(...ignoredSheet(options.sheet, name, format));
  // How the bytes were decoded is part of the run's identity: a run read with the wrong
  // --encoding is not resumed for the same file read right (its lookups were of garbled names).
  // UTF-8 says nothing, so the journals of earlier builds still resume.
  const encoding = enc.encoding.toLowerCase().replace(/[^a-z0-9]/g, ''); // UTF-8, utf8: one
  const decoded = encoding === 'utf8' ? {} : { encoding };
  const identity = async () => ({ ...(await identify()), ...decoded });
  const base = { name, filePath, format, warnings, identity, ...(file ? { file } : {}) };
  const readOpts = {
    name,
    encoding: enc.encoding,
    bomLength: enc.bomLength,
    maxRecordChars: options.maxRecordChars,
  };

  if (format === 'json' || format === 'jsonl')
    return jsonSource(format, base, readOpts, enc, verify);
  return csvSource({ base, readOpts, enc, verify, text, sample, options, truncated, scan });
}

/** A sheet is a workbook's: asked of a text file, it is said to do nothing (not silently). */
function ignoredSheet(sheet: string | number | undefined, name: string, format: string): string[] {
  return sheet === undefined
    ? []
    : [`--sheet ${sheet}: ${name} is no workbook (${format}): ignored`];
}

/** A file named or forced as `.xlsx` that is no ZIP workbook. */
function notAWorkbook(name: string): EnrichError {
  return new EnrichError(
    'INPUT_UNREADABLE',
    `${name} is not an Excel workbook: expected an .xlsx file (a ZIP archive holding the sheets)`,
    {
      location: { file: name },
      hint: 'If it is a CSV file, rename it (or pass --input-format csv).',
    },
  );
}

type SourceBase = Omit<InputSource, 'close' | 'dialect' | 'header' | 'rawHeader' | 'rows'>;
type ReadOpts = { name: string; encoding: string; bomLength: number; maxRecordChars?: number };
type Encoding = ReturnType<typeof detectEncoding>;

/** A JSON or JSON Lines input: its columns are the union of its records' keys. */
async function jsonSource(
  format: 'json' | 'jsonl',
  base: SourceBase & { filePath: string },
  readOpts: ReadOpts,
  enc: Encoding,
  verify: () => Promise<void>,
): Promise<Omit<InputSource, 'close'>> {
  const { filePath } = base;
  const read = format === 'json' ? readJsonArray : readJsonLines;
  // JSON objects may differ in keys: one streaming pass collects their union, in first-seen order.
  const keys = new Set<string>();
  for await (const rec of read(filePath, readOpts))
    for (const k of Object.keys(rec.value)) keys.add(k);
  await verify();
  const header = [...keys];
  const toRow = (rec: JsonRecord, index: number): InputRow => {
    const row: InputRow = {
      index,
      line: rec.line,
      cells: header.map((k) => jsonCell(ownValue(rec.value, k))),
      value: rec.value,
    };
    const nested = nestedCells(header, rec.value);
    if (nested) row.nested = nested;
    return row;
  };
  return {
    ...base,
    dialect: { encoding: enc.encoding, bom: enc.bom, headerLine: 0, sepLine: false },
    header,
    rawHeader: header,
    rows: () => mapRows(read(filePath, readOpts), toRow, verify),
  };
}

/** A CSV or TSV input: dialect sniffed from the sample, header row found, rows shaped to it. */
async function csvSource(o: {
  base: SourceBase & { filePath: string; name: string };
  readOpts: ReadOpts;
  enc: Encoding;
  verify: () => Promise<void>;
  text: string;
  sample: Buffer;
  options: ReadOptions;
  truncated: boolean;
  scan: () => ReturnType<typeof scanFile>;
}): Promise<Omit<InputSource, 'close'>> {
  const { base, readOpts, enc, verify, text, sample, options, truncated, scan } = o;
  const { filePath, name, warnings, format } = base;
  const sniffed = sniffDialect(text, {
    delimiter: options.delimiter ?? (format === 'tsv' ? '\t' : undefined),
    headerRow: options.headerRow,
    truncated,
  });
  if (sniffed.skippedLines) {
    warnings.push(
      `${name}: line ${sniffed.headerLine} is taken as the header (the lines above it look like notes); if the header is on another line, run again with --header-row <line>`,
    );
  }
  const csvOpts = {
    ...readOpts,
    delimiter: sniffed.delimiter,
    headerLine: sniffed.headerLine,
    lfOnly: !sample.includes(13) && !(truncated && (await scan()).hasCr),
    maxRecordChars: options.maxRecordChars,
  };
  const pinned = { ...csvOpts, verify };
  let rawHeader: string[] | undefined;
  for await (const rec of readCsvRecords(filePath, csvOpts)) {
    rawHeader = rec.cells;
    break;
  }
  // A line of nothing but spaces or tabs names no column: it is no header either (a line of
  // delimiters is one, of unnamed columns: "(column 1)"...).
  const blank = rawHeader?.every((cell) => cell.trim() === '');
  if (!rawHeader || (blank && (rawHeader.length === 1 || (!truncated && text.trim() === ''))))
    throw noHeaderRow(name, sniffed.headerLine, {
      ...options,
      text,
      truncated,
      bytes: sample.length,
    });
  const width = rawHeader.length;
  const wider = widerRowsWarning(name, 'line', sniffed, width);
  if (wider) warnings.push(wider);
  return {
    ...base,
    dialect: {
      delimiter: sniffed.delimiter,
      encoding: enc.encoding,
      bom: enc.bom,
      headerLine: sniffed.headerLine,
      sepLine: sniffed.sepLine,
    },
    header: uniqueHeader(rawHeader),
    rawHeader,
    rows: () => readCsvRecords(filePath, pinned, csvRowShaper(rawHeader)),
  };
}

async function* mapRows(
  records: AsyncIterable<JsonRecord>,
  toRow: (r: JsonRecord, i: number) => InputRow,
  verify: () => Promise<void>,
): AsyncGenerator<InputRow> {
  await verify();
  let index = 0;
  for await (const rec of records) yield toRow(rec, index++);
  await verify();
}

/**
 * What the encoding found says of the file: Windows-1252 that holds UTF-8 characters (two exports
 * pasted together), or a UTF-8 BOM over bytes that are no UTF-8 (they would become U+FFFD).
 * Nothing when the user chose the encoding.
 */
async function encodingWarnings(
  name: string,
  enc: Encoding,
  o: {
    sample: Buffer;
    truncated: boolean;
    scan: () => ReturnType<typeof scanFile>;
    forced?: string | undefined;
  },
): Promise<string[]> {
  if (o.forced) return [];
  if (enc.encoding === 'windows-1252' && holdsUtf8Characters(o.sample)) {
    return [
      `${name} is not valid UTF-8 throughout, so it is read as Windows-1252, but it also holds UTF-8 characters, which that shows as pairs like "Ã©"; if it is UTF-8 with a few broken bytes, run again with --encoding utf-8 (the broken bytes become "\uFFFD")`,
    ];
  }
  // A UTF-8 BOM is trusted, but bytes that are no UTF-8 behind it are said, not changed silently.
  if (enc.bom && enc.encoding === 'utf-8') {
    const whole = o.truncated ? (await o.scan()).utf8 : isUtf8(o.sample, false);
    if (!whole) {
      return [
        `${name} starts with a UTF-8 byte order mark but is not valid UTF-8 throughout: its broken bytes are read as "\uFFFD" (and sent so); if the file is Windows-1252, run again with --encoding windows-1252`,
      ];
    }
  }
  return [];
}
