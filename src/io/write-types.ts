import type { FileFormat } from './file-format.js';
import type { Writable } from 'node:stream';
import type { FormulaEscape } from './formula-escape.js';
import type { InputRow } from './read.js';

export type RowStatus = 'enriched' | 'not_found' | 'failed' | 'invalid' | 'missing' | 'expired';

/** The status columns every CSV/TSV output carries after the input columns. */
export const STATUS_COLUMNS = [
  'enrich_status',
  'enrich_error',
  'enrich_credit_charged',
  'enrich_cached_at',
] as const;

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
  /** Gzip the output (node:zlib); by default when the target's name ends in `.gz`. */
  gzip?: boolean;
  formulaEscape?: FormulaEscape;
  /** JSON key of the record: `record` (contacts) or `records` (companies). */
  recordKey?: 'record' | 'records';
  /** CSV/TSV: an Excel `sep=<delimiter>` first line (after the BOM), as the input had. */
  sepLine?: boolean;
  /** JSON/JSONL: each object says the input line its row starts on (`line`, after `row`): the rejects. */
  jsonLine?: boolean;
  /** The sheet's name in an `.xlsx` output (`Enriched` by default). */
  sheetName?: string;
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
  /** null: not sent (empty); 'unknown': sent, its answer not seen. */
  creditCharged: boolean | null | 'unknown';
  /** When a result taken from the results cache was first looked up (ISO 8601); null otherwise. */
  cachedAt?: string | null;
  /** Aligned to the extra columns that follow the status columns. */
  values: (string | number | boolean | null)[];
  /** JSON output: the record (contacts) or records array (companies). */
  record?: unknown;
}
