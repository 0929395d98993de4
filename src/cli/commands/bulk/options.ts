import type { Command } from 'commander';
import { parseTypedDuration } from '../../../config/duration.js';
import { parseSetting, type Settings } from '../../../config/settings-table.js';
import { usageError } from '../../../errors.js';
import { FILE_FORMATS, type FileFormat } from '../../../io/file-format.js';
import type { ReadOptions } from '../../../io/read.js';
import type { MappingOptions } from '../../../pipeline/mapping/resolve-mapping.js';
import type { BulkKind, FormulaEscape } from '../../../pipeline/types.js';
import type { RequestOptions } from '../../../bulk/request-metadata.js';
import { parseIntegerFlag, refuseRefreshWithoutCache } from '../../flags.js';

/** Every bulk flag, checked and normalised once (DESIGN.md section 4, plus --header-row/--input-format). */
export interface BulkOptions {
  readonly kind: BulkKind;
  /** Output path; undefined = stdout. */
  readonly output?: string;
  /** Output format from --format; undefined = from the output's extension, else the input's own. */
  readonly format?: FileFormat;
  readonly map: Readonly<Record<string, string>>;
  readonly mappingFile?: string;
  readonly saveMapping?: string;
  readonly idColumn?: string;
  /** Undefined unless given on the command line: the settings (config, env) decide then. */
  readonly batchSize?: number;
  readonly concurrency?: number;
  readonly dryRun: boolean;
  readonly maxCredits?: number;
  readonly dedupe: boolean;
  readonly wait: boolean;
  readonly timeoutMs?: number;
  readonly restart: boolean;
  readonly resendUnconfirmed: boolean;
  /** Undefined unless given: the setting decides then. */
  readonly rateLimit?: number;
  /** --no-cache: neither read nor write the results cache. */
  readonly cache: boolean;
  /** --refresh: look every row up again and keep the new answers. */
  readonly refresh: boolean;
  /** --max-age; undefined unless given: setting cache_max_age decides then. */
  readonly maxAgeMs?: number;
  /** Contacts: mobile_phone_enrichment, mobile_phone_exists, business_email_exists, real_time_verification. */
  readonly mobile: boolean;
  readonly requireMobile: boolean;
  readonly requireEmail: boolean;
  readonly verify: boolean;
  /** Companies: top_matches_returned and one output row per match. */
  readonly top: number;
  readonly explode: boolean;
  readonly prefix?: string;
  readonly rejects?: string;
  readonly formulaEscape?: FormulaEscape;
  /** --bom true, --no-bom false; undefined: a BOM when the input came from Excel's world. */
  readonly bom?: boolean;
  readonly outputDelimiter?: string;
  /** --fields: the enrichment fields to write. */
  readonly fields?: readonly string[];
  /** --sheet: the worksheet of an XLSX input, by name or number. */
  readonly sheet?: string;
  readonly delimiter?: string;
  readonly encoding?: string;
  readonly headerRow?: number;
  readonly inputFormat?: FileFormat;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Declares the bulk options of `kind` on a command (contacts-only and companies-only ones included as fits). */
export function addBulkOptions(cmd: Command, kind: BulkKind): Command {
  cmd
    .option('-o, --output <file>', 'write the enriched file here (default: stdout)')
    .option(
      '--format <format>',
      'output format: csv, tsv, json, jsonl, xlsx (default: from -o, .gz included, else the input format, CSV for a workbook)',
    )
    .option(
      '--map <field=Column>',
      'map an API field to an input column (repeatable; overrides detection)',
      collect,
    )
    .option('--mapping <file>', 'use exactly this saved mapping (JSON field -> column)')
    .option('--save-mapping <file>', 'save the mapping used, for --mapping next time')
    .option('--id-column <column>', 'a column with your own row id, echoed back with the results')
    .option('--batch-size <n>', 'rows per bulk job (default: setting batch_size, 1000)')
    .option(
      '--concurrency <n>',
      'bulk jobs in flight at once (default: setting concurrency, else adaptive up to 32)',
    )
    .option('--dry-run', 'send nothing: show the mapping and the plan')
    .option('--max-credits <n>', 'stop before spending more than n credits')
    .option(
      '--no-dedupe',
      'send every valid row, even identical ones (default: identical rows are sent once)',
    )
    .option(
      '--no-wait',
      'submit the jobs and exit; the same command run again later downloads the results and writes the output',
    )
    .option(
      '--timeout <duration>',
      'give up waiting after this long, e.g. 30m, 2h (default: setting timeout, 2h)',
    )
    .option('--restart', 'ignore a saved run of the same input and start over')
    .option(
      '--resend-unconfirmed',
      'send again batches the service may have charged without confirming them (may charge twice)',
    )
    .option('--rate-limit <req/s>', 'at most this many requests per second (setting rate_limit)')
    .option(
      '--max-age <duration>',
      'use cached answers younger than this, e.g. 7d, 12h, 0s (default: setting cache_max_age, 30d)',
    )
    .option('--refresh', 'look every row up again (paying again) and keep the new answers')
    .option('--no-cache', 'neither read nor write the results cache');
  if (kind === 'contacts') {
    cmd
      .option('--mobile', 'add mobile phone numbers when available')
      .option('--require-email', 'return only contacts having a work email')
      .option('--require-mobile', 'return only contacts having a mobile phone (needs --mobile)')
      .option('--verify', 'send contacts through real-time email verification');
  } else {
    cmd
      .option('--top <n>', 'best-matching company records per row, 1..10', '1')
      .option('--explode', 'one output row per match, with enrich_match_rank');
  }
  return addOutputOptions(cmd);
}

/** The options of the output and of how the input is read. */
function addOutputOptions(cmd: Command): Command {
  return cmd
    .option('--prefix <str>', 'prefix of the enriched columns (default: setting prefix, enriched_)')
    .option('--rejects <file>', 'also write the invalid rows, with their reason, to this file')
    .option(
      '--formula-escape <mode>',
      'quote service values a spreadsheet would run: auto, always, never (default: setting formula_escape, auto)',
    )
    .option(
      '--fields <list>',
      'enrichment fields to write, comma-separated (e.g. email,mobile_phone,company_website; default: all)',
    )
    .option(
      '--bom',
      'start a CSV/TSV output with a UTF-8 BOM (default: when the input had one, was UTF-16, Windows-1252 or .xlsx)',
    )
    .option('--no-bom', 'never start the output with a BOM')
    .option(
      '--output-delimiter <c>',
      'output delimiter: , ; | tab (default: from the format; a CSV keeps the input delimiter, tabs become commas)',
    )
    .option(
      '--sheet <name|n>',
      'the worksheet of an .xlsx input, by name (a hidden one too) or by number among the visible tabs; a sheet named so wins over a position (default: the first visible)',
    )
    .option('--delimiter <c>', 'input delimiter: , ; | tab (default: detected)')
    .option(
      '--encoding <name>',
      'input encoding: utf-8, utf-16le, utf-16be, windows-1252 (default: detected)',
    )
    .option('--header-row <n>', 'line number of the header row (default: detected)')
    .option(
      '--input-format <format>',
      'input format: csv, tsv, json, jsonl, xlsx (default: from extension or content)',
    );
}

const FORMATS: readonly FileFormat[] = FILE_FORMATS;

/** A setting given as a flag, checked by the settings table's own parser (one range, one place). */
export function settingFlag<K extends keyof Settings>(
  prop: K,
  flag: string,
  raw: unknown,
): Settings[K] {
  try {
    return parseSetting(prop, raw);
  } catch (err) {
    throw usageError(`${flag}: ${(err as Error).message}`);
  }
}

function oneOf<T extends string>(flag: string, raw: unknown, allowed: readonly T[]): T {
  const v = String(raw).trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(v))
    throw usageError(`${flag}: expected one of ${allowed.join(', ')}, got "${String(raw)}"`);
  return v as T;
}

/** "tab", "\t", "semicolon"... to the one character it names. */
export function parseDelimiter(raw: string, flag = '--delimiter'): string {
  const names: Record<string, string> = {
    tab: '\t',
    '\\t': '\t',
    comma: ',',
    semicolon: ';',
    pipe: '|',
    space: ' ',
  };
  const d = names[raw.toLowerCase()] ?? raw;
  if (d.length !== 1 || d === '"' || d === '\n' || d === '\r') {
    throw usageError(
      `${flag}: expected one character (or tab, comma, semicolon, pipe), got "${raw}"`,
    );
  }
  return d;
}

/** How `--map` is written, as each command's usage errors show it. */
export const MAP_SHAPES = {
  contacts: { shape: 'field=Column', example: 'business_email="Work Email"' },
  companies: { shape: 'field=Column', example: 'company_name="Account Name"' },
  'verify-emails': { shape: 'email=Column', example: 'email="Work Email"' },
} as const;

/** Parses `--map field=Column` values into field -> column (`field=` unmaps the field). */
export function parseMapFlags(
  values: readonly string[],
  { shape, example }: { shape: string; example: string },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw usageError(`--map: expected ${shape} (e.g. ${example}), got "${v}"`);
    out[v.slice(0, eq).trim()] = v.slice(eq + 1).trim();
  }
  return out;
}

type Raw = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** Turns commander's flags into a frozen BulkOptions, refusing bad values and combinations with USAGE (exit 2). */
export function normalizeBulkOptions(kind: BulkKind, raw: Raw): BulkOptions {
  const output = str(raw.output) === '-' ? undefined : str(raw.output);
  const format = raw.format === undefined ? undefined : oneOf('--format', raw.format, FORMATS);
  if (raw.explode === true && kind !== 'companies')
    throw usageError('--explode is for companies only');
  refuseRefreshWithoutCache(raw);
  const timeout = str(raw.timeout);
  let timeoutMs: number | undefined;
  if (timeout !== undefined) timeoutMs = parseTypedDuration(timeout, '--timeout');
  const options: BulkOptions = {
    kind,
    output,
    format,
    map: parseMapFlags((raw.map as string[] | undefined) ?? [], MAP_SHAPES[kind]),
    mappingFile: str(raw.mapping),
    saveMapping: str(raw.saveMapping),
    idColumn: str(raw.idColumn),
    batchSize:
      raw.batchSize === undefined
        ? undefined
        : settingFlag('batchSize', '--batch-size', raw.batchSize),
    concurrency:
      raw.concurrency === undefined
        ? undefined
        : settingFlag('concurrency', '--concurrency', raw.concurrency),
    dryRun: raw.dryRun === true,
    maxCredits:
      raw.maxCredits === undefined
        ? undefined
        : parseIntegerFlag('--max-credits', raw.maxCredits, 0),
    dedupe: raw.dedupe !== false,
    wait: raw.wait !== false,
    timeoutMs,
    restart: raw.restart === true,
    resendUnconfirmed: raw.resendUnconfirmed === true,
    cache: raw.cache !== false,
    refresh: raw.refresh === true,
    maxAgeMs:
      raw.maxAge === undefined ? undefined : settingFlag('cacheMaxAgeMs', '--max-age', raw.maxAge),
    rateLimit:
      raw.rateLimit === undefined
        ? undefined
        : settingFlag('rateLimit', '--rate-limit', raw.rateLimit),
    mobile: raw.mobile === true,
    requireMobile: raw.requireMobile === true,
    requireEmail: raw.requireEmail === true,
    verify: raw.verify === true,
    top: kind === 'companies' ? parseIntegerFlag('--top', raw.top ?? '1', 1, 10) : 1,
    explode: raw.explode === true,
    prefix: str(raw.prefix),
    rejects: str(raw.rejects),
    formulaEscape:
      raw.formulaEscape === undefined
        ? undefined
        : settingFlag('formulaEscape', '--formula-escape', raw.formulaEscape),
    bom: typeof raw.bom === 'boolean' ? raw.bom : undefined,
    outputDelimiter:
      raw.outputDelimiter === undefined
        ? undefined
        : parseDelimiter(String(raw.outputDelimiter), '--output-delimiter'),
    fields: str(raw.fields)?.split(','),
    sheet: str(raw.sheet),
    delimiter: raw.delimiter === undefined ? undefined : parseDelimiter(String(raw.delimiter)),
    encoding: str(raw.encoding),
    headerRow:
      raw.headerRow === undefined ? undefined : parseIntegerFlag('--header-row', raw.headerRow, 1),
    inputFormat:
      raw.inputFormat === undefined ? undefined : oneOf('--input-format', raw.inputFormat, FORMATS),
  };
  return Object.freeze(options);
}

/** The settings the command line gave explicitly (flags win over env, config and defaults). */
export function settingFlags(o: BulkOptions): Partial<Settings> {
  // Unset flags stay undefined, which resolveSettings skips.
  const { batchSize, concurrency, prefix, formulaEscape, timeoutMs, rateLimit } = o;
  return {
    batchSize,
    concurrency,
    prefix,
    formulaEscape,
    timeoutMs,
    rateLimit,
    cacheMaxAgeMs: o.maxAgeMs,
  };
}

/** The reader options the flags ask for (--input-format, --delimiter, --encoding, --header-row). */
export function readOptionsOf(o: BulkOptions): ReadOptions {
  return {
    format: o.inputFormat,
    delimiter: o.delimiter,
    encoding: o.encoding,
    headerRow: o.headerRow,
    sheet: o.sheet,
  };
}

/** The mapping options the flags ask for (--map, --mapping, --save-mapping). */
export function mappingOptionsOf(kind: BulkKind, o: BulkOptions): MappingOptions {
  return { kind, map: o.map, mappingFile: o.mappingFile, saveMapping: o.saveMapping };
}

/** The request flags of a bulk command: what each row asks of the service. */
export function requestOptionsOf(o: BulkOptions): RequestOptions {
  return {
    mobile: o.mobile,
    requireEmail: o.requireEmail,
    requireMobile: o.requireMobile,
    verify: o.verify,
    top: o.top,
  };
}
