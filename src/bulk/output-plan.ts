import { EnrichError } from '../errors.js';
import { withoutColumns } from '../io/drop-columns.js';
import { FILE_FORMATS, formatOfExtension, unwritableFormatOf } from '../io/file-format.js';
import type { FileFormat } from '../io/file-format.js';
import type { InputSource } from '../io/read.js';
import { earlierOutputColumns, fieldNames } from '../pipeline/join/output-columns.js';
import type { BulkKind, RunWords } from '../pipeline/types.js';

/**
 * The output format: the one asked for, else the output's extension (`.csv.gz` is CSV),
 * else the input's own (a workbook's to stdout is CSV: text for a terminal or a pipe). A
 * name this tool cannot write (`out.parquet`, `out.xls`) is refused before anything is sent.
 */
export function outputFormatOf(
  asked: FileFormat | undefined,
  output: string,
  inputFormat: FileFormat,
): FileFormat {
  if (asked) return asked;
  if (output === '-') return inputFormat === 'xlsx' ? 'csv' : inputFormat;
  const cannot = unwritableFormatOf(output);
  if (cannot) {
    throw new EnrichError(
      'USAGE',
      `cannot write ${output}: ${cannot} is not a format enrich writes; expected ${FILE_FORMATS.map((f) => `.${f}`).join(', ')} (optionally .gz)`,
      {
        location: { file: output },
        hint:
          cannot === 'gzip-compressed Excel'
            ? 'A workbook is compressed already: name the output .xlsx, or .csv.gz for a compressed table.'
            : 'Name the output .csv, .tsv, .json, .jsonl or .xlsx (add .gz to compress one but .xlsx).',
      },
    );
  }
  return formatOfExtension(output) ?? inputFormat;
}

/**
 * The delimiter of a CSV/TSV output: the one asked for, else TSV's tab; a CSV keeps the
 * input's own delimiter (a semicolon file stays one) unless that was a tab and the output was
 * named or asked to be CSV (`-o out.csv`, `--format csv`), which means commas.
 */
export function outputDelimiterOf(
  asked: string | undefined,
  format: FileFormat,
  named: boolean,
  source: InputSource,
): string | undefined {
  if (format !== 'csv' && format !== 'tsv') return undefined; // asked of one: ignoredOutputOptions
  if (asked !== undefined) return asked;
  if (format === 'tsv') return '\t';
  const own = source.format === 'csv' ? source.dialect.delimiter : undefined;
  if (own === '\t' && named) return ',';
  return own ?? ',';
}

/**
 * A UTF-8 BOM on a CSV/TSV output: as asked, else when the input came from Excel's world
 * (it had a BOM, was UTF-16 or Windows-1252, or was a workbook), so that Excel opens the
 * output with its accents intact.
 */
export function outputBomOf(asked: boolean | undefined, format: FileFormat, source: InputSource) {
  if (format !== 'csv' && format !== 'tsv') return false; // asked of one: ignoredOutputOptions
  if (asked !== undefined) return asked;
  const d = source.dialect;
  return (
    source.format === 'xlsx' ||
    d.bom ||
    d.encoding.startsWith('utf-16') ||
    d.encoding === 'windows-1252'
  );
}

/** The outputs that are no delimited text, as the warnings name them. */
const UNDELIMITED: Partial<Record<FileFormat, string>> = {
  json: 'JSON',
  jsonl: 'JSON Lines',
  xlsx: 'Excel',
};

/**
 * What the output options asked for that the output's format has no use for, as warnings
 * (not silently dropped): a delimiter or a BOM belongs to a CSV/TSV output only, and JSON,
 * JSON Lines and workbooks are written without either. `bom: false` is not named: a BOM is
 * never written there, as asked.
 */
export function ignoredOutputOptions(
  o: { output: string; outputDelimiter?: string | undefined; bom?: boolean | undefined },
  format: FileFormat,
  words: RunWords,
): string[] {
  const name = UNDELIMITED[format];
  if (name === undefined) return [];
  const what = `for ${name} output (${o.output === '-' ? 'stdout' : o.output})`;
  const warnings: string[] = [];
  if (o.outputDelimiter !== undefined)
    warnings.push(
      `${words.option('outputDelimiter')} does nothing ${what}: only a CSV or TSV output has a delimiter; ignored`,
    );
  if (o.bom === true)
    warnings.push(
      `${words.option('bom')} does nothing ${what}: only a CSV or TSV output starts with a BOM; ignored`,
    );
  return warnings;
}

/** The same input with `more` warnings for its caller to show (itself when there are none). */
export function withWarnings(source: InputSource, more: readonly string[]): InputSource {
  return more.length === 0 ? source : { ...source, warnings: [...source.warnings, ...more] };
}

/**
 * An Excel `sep=` first line on a CSV/TSV output when the input had one: Excel in a locale whose
 * list separator differs then still opens it as columns (the line names the output's delimiter).
 */
export function outputSepLineOf(format: FileFormat, source: InputSource): boolean {
  return (format === 'csv' || format === 'tsv') && source.dialect.sepLine;
}

/** `--fields`: the enrichment fields to write, each a record field's name; unknown names refused. */
export function resolveFields(
  kind: BulkKind,
  fields: readonly string[] | undefined,
  words: RunWords,
): readonly string[] | undefined {
  if (fields === undefined) return undefined;
  const valid = fieldNames(kind);
  const asked = [...new Set(fields.map((f) => f.trim()).filter((f) => f !== ''))];
  const unknown = asked.filter((f) => !valid.includes(f));
  if (asked.length > 0 && unknown.length === 0) return Object.freeze(asked);
  const what = unknown.length
    ? `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((f) => JSON.stringify(f)).join(', ')}`
    : 'no field named';
  throw new EnrichError('USAGE', `${words.option('fields')}: ${what}`, {
    hint: `The ${kind} fields are: ${valid.join(', ')}.`,
  });
}

/**
 * An input that is an earlier output of this tool (it has `enrich_status`): its `enrich_*`
 * columns and those `written` says the earlier run wrote are left out, to be replaced by
 * this run's, not doubled.
 */
export function replaceEarlierOutput(
  source: InputSource,
  written: (column: string) => boolean,
  what: string,
): InputSource {
  if (source.format === 'json' || source.format === 'jsonl') return source;
  const drop = earlierOutputColumns(source.rawHeader, written);
  if (drop.length === 0) return source;
  return withoutColumns(
    source,
    drop,
    `${source.name} was enriched before: its ${drop.length} enrich_*/${what} columns are replaced by this run's, not added a second time`,
  );
}

/**
 * A table output (CSV, TSV, XLSX) whose added columns would repeat a name of the input's
 * (`x_name` with `--prefix x_`, or an `enrich_error` of the user's own): a header with one
 * name twice cannot be read back by name, and a later run would take the user's column for
 * its own. Refused before anything is sent.
 */
export function refuseColumnClash(
  source: InputSource,
  format: FileFormat,
  added: readonly string[],
  hint: string,
): void {
  if (format === 'json' || format === 'jsonl') return;
  const own = new Set(source.rawHeader);
  const clash = added.filter((c) => own.has(c));
  if (clash.length === 0) return;
  const names = clash.slice(0, 5).map((c) => JSON.stringify(c));
  if (clash.length > 5) names.push(`and ${clash.length - 5} more`);
  throw new EnrichError(
    'USAGE',
    `the input has ${clash.length === 1 ? 'a column' : 'columns'} named ${names.join(', ')}, which this run writes too: the output would have ${clash.length === 1 ? 'that name' : 'those names'} twice`,
    { location: { file: source.name, ...(clash.length === 1 ? { column: clash[0] } : {}) }, hint },
  );
}
