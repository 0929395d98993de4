import type { ReadOptions } from '../io/read.js';
import type { MappingOptions } from '../pipeline/mapping/resolve-mapping.js';
import type { BulkKind, FileFormat, FormulaEscape, RunWords } from '../pipeline/types.js';
import type { RequestOptions } from './request-metadata.js';

/**
 * A bulk run as its caller states it: the one public input type of `enrichFile`, the
 * CLI's bulk commands and their dry runs. Left out means the CLI's default. Resolved once
 * (`resolveRun`) into the read-only `ResolvedRun` the stages use.
 */
export interface BulkRunOptions {
  kind: BulkKind;
  /** The output path, or `-` for stdout. */
  output: string;
  /** How to read a path given as input (`-` reads stdin). */
  read?: ReadOptions;
  /** `--map`, `--mapping`, `--save-mapping`. */
  mapping?: Omit<MappingOptions, 'kind' | 'words'>;
  /** Your own row id column, echoed in `custom_fields` (`--id-column`). */
  idColumn?: string;
  request?: RequestOptions;
  /** Rows per job (setting batch_size, 1000). */
  batchSize?: number;
  /** Jobs in flight (setting concurrency; unset: as many as make the service finish sooner, up to 32). */
  concurrency?: number;
  /** Send identical rows once (true). */
  dedupe?: boolean;
  maxCredits?: number;
  /** How long to wait for the jobs, in ms (setting timeout, 2 h). */
  timeoutMs?: number;
  /** False: submit, journal and return; the same call later finishes (true). */
  wait?: boolean;
  restart?: boolean;
  /**
   * Send again batches whose POST may have reached a service that does not honour
   * idempotency keys and never confirmed them: they may be charged twice (false).
   */
  resendUnconfirmed?: boolean;
  /** Use the results cache (true): false neither reads nor writes it (`--no-cache`). */
  cache?: boolean;
  /** Look every row up again, and keep the new answers in the cache (`--refresh`). */
  refresh?: boolean;
  /** Cached answers older than this (ms) are looked up again (setting cache_max_age, 30 days). */
  maxAgeMs?: number;
  /** Finished runs' journals and results are removed this long after (setting run_retention, 7 days). */
  runRetentionMs?: number;
  /** Where the results cache lives (the OS cache dir, or ENRICH_CACHE_DIR). */
  cacheDir?: string;
  /** Where run journals and results live (the OS state dir's `runs`, or ENRICH_STATE_DIR's). */
  runsDir?: string;
  /** The output format (from the output's extension, else the input's own). */
  format?: FileFormat;
  /** A UTF-8 BOM on CSV/TSV output; left out: when the input had one, was UTF-16, Windows-1252 or a workbook. */
  bom?: boolean;
  /** The CSV/TSV output's delimiter (default: TSV's tab; a CSV keeps the input's, a tab becoming a comma). */
  outputDelimiter?: string;
  /** The enrichment fields to write, by record field name (`email`, `company_website`); all by default. */
  fields?: readonly string[];
  formulaEscape?: FormulaEscape;
  explode?: boolean;
  /** Prefix of the enriched columns (setting prefix, `enriched_`). */
  prefix?: string;
  /** Also write the invalid rows here. */
  rejects?: string;
  /** How the run finds its way back to itself in `enrich jobs` (`enrich <kind> <input> -o <output>`). */
  command?: string;
  /** How messages name options and how to resume (the CLI names its flags). */
  words?: RunWords;
}

/** Every key of BulkRunOptions (unknown keys are errors, not silently ignored). */
export const BULK_RUN_KEYS: readonly (keyof BulkRunOptions)[] = [
  'kind',
  'output',
  'read',
  'mapping',
  'idColumn',
  'request',
  'batchSize',
  'concurrency',
  'dedupe',
  'maxCredits',
  'timeoutMs',
  'wait',
  'restart',
  'resendUnconfirmed',
  'cache',
  'refresh',
  'maxAgeMs',
  'cacheDir',
  'runRetentionMs',
  'runsDir',
  'format',
  'bom',
  'outputDelimiter',
  'fields',
  'formulaEscape',
  'explode',
  'prefix',
  'rejects',
  'command',
  'words',
];
