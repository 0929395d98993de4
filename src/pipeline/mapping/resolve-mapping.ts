import { EnrichError } from '../../errors.js';
import type { InputRow, InputSource } from '../../io/read.js';
import {
  detectMapping,
  fieldsOf,
  FULL_NAME,
  loadMapping,
  mappingToJson,
  resolveColumn,
  saveMapping,
} from './map-columns.js';
import type { ApiField, ColumnMapping, BulkKind } from './mapping-types.js';
import { splitFullName } from './normalize.js';
import type { RunWords } from '../types.js';
import { LIBRARY_WORDS } from '../words.js';
import { uniqueHeader } from '../../io/header.js';

export interface MappingOptions {
  kind: BulkKind;
  /** `--map field=Column` overrides (an empty column unmaps the field). */
  map?: Record<string, string>;
  /** `--mapping file`: use exactly this mapping, detect nothing. */
  mappingFile?: string;
  /** `--save-mapping file`. */
  saveMapping?: string;
  /** Rows read for sample values (detection and the dry-run table). */
  sampleRows?: number;
  /** How hints name the ways to map a column (the library's options by default). */
  words?: RunWords;
}

/** The mapping and a few sample values per field. */
export interface ResolvedMapping {
  mapping: ColumnMapping;
  /** field -> column name (the `--save-mapping` form). */
  names: Record<string, string>;
  samples: Partial<Record<ApiField, string[]>>;
}

const SAMPLE_VALUES = 3;

/** Reads the first rows, loads/overrides/detects the mapping and saves it when asked. */
export async function resolveMapping(
  source: InputSource,
  options: MappingOptions,
): Promise<ResolvedMapping> {
  const head: InputRow[] = [];
  const want = options.sampleRows ?? 50;
  let rows = 0;
  for await (const row of source.rows()) {
    rows++;
    if (!row.error) head.push(row);
    if (head.length >= want) break;
  }
  const fromFile = options.mappingFile ? await loadMapping(options.mappingFile) : {};
  const overrides = { ...fromFile, ...(options.map ?? {}) };
  const detect = () =>
    inFile(source, () =>
      withHeaderBelow(source, head, options, () =>
        detectMapping(
          options.kind,
          source.header,
          head.map((r) => r.cells),
          overrides,
          {
            auto: !options.mappingFile,
            words: options.words,
          },
        ),
      ),
    );
  const mapping = rows === 0 ? mappingWithoutRows(source, options, overrides, detect) : detect();
  if (options.saveMapping)
    await saveMapping(options.saveMapping, options.kind, mapping, source.header);
  return {
    mapping,
    names: mappingToJson(mapping, source.header),
    samples: sampleValues(mapping, head),
  };
}

/**
 * The mapping of an input without rows (a nightly export with nothing new): nothing is sent, so
 * detection finding nothing (a header no name matches, values to look at none) is no error, and a
 * run ends with an empty output instead of failing cron. What the user said is still checked, as it
 * would fail the next run too: an unknown field, or a column a known header lacks (renamed). JSON
 * takes its columns from its records: without records there are none to check names against.
 * `--save-mapping` still needs a mapping that was found: saving an incomplete one would only make
 * the next `--mapping` run fail.
 */
function mappingWithoutRows(
  source: InputSource,
  options: MappingOptions,
  overrides: Record<string, string>,
  detect: () => ColumnMapping,
): ColumnMapping {
  const known = source.header.length > 0;
  if (!known && options.saveMapping) {
    throw new EnrichError(
      'MAPPING_INVALID',
      `cannot save a mapping: ${source.name} has no records, so no columns to map; expected at least one record to detect the mapping from`,
      { location: { file: source.name } },
    );
  }
  const fields = new Set<string>(fieldsOf(options.kind));
  if (options.kind === 'contacts') fields.add(FULL_NAME);
  if (Object.keys(overrides).some((f) => !fields.has(f))) {
    // Columns mapped to nothing: the unknown field is the error, whatever the header holds.
    const named = Object.fromEntries(Object.keys(overrides).map((f) => [f, '']));
    return inFile(source, () =>
      detectMapping(options.kind, [], [], named, { auto: false, words: options.words }),
    );
  }
  try {
    return detect();
  } catch (err) {
    if (!(err instanceof EnrichError) || !err.code.startsWith('MAPPING_')) throw err;
    // A column a known header lacks, or a mapping to save; detection's own failures are forgiven.
    if (known && (options.saveMapping || err.location?.column !== undefined)) throw err;
  }
  // What the user mapped, for the plan and the journal (every column was found above).
  const mapping: ColumnMapping = { fields: {} };
  for (const [field, column] of Object.entries(known ? overrides : {})) {
    if (column.trim() === '') continue;
    const col = resolveColumn(source.header, column, field, options.words);
    if (field === FULL_NAME) mapping.split = { column: col };
    else mapping.fields[field as ApiField] = col;
  }
  return mapping;
}

/** The column of `--id-column name`; MAPPING_INVALID naming the file and its columns when absent. */
export function resolveIdColumn(
  source: InputSource,
  name: string | undefined,
  label = 'idColumn',
): number | undefined {
  // JSON without records has no columns: there is no row to take an id from either.
  return name === undefined || source.header.length === 0
    ? undefined
    : inFile(source, () => resolveColumn(source.header, name, label));
}

/** Rows below the header looked at for one that reads as the header (a `key,value` note above the table). */
const HEADER_BELOW_ROWS = 10;

/**
 * Runs detection; when it maps too little to send a row and nothing was mapped by hand, and one of
 * the first rows reads as a header detection can map (`Exported on:,2024-03-01` above
 * `Email,Company`), the hint names that line's `--header-row`.
 */
function withHeaderBelow(
  source: InputSource,
  head: readonly InputRow[],
  options: MappingOptions,
  detect: () => ColumnMapping,
): ColumnMapping {
  try {
    return detect();
  } catch (err) {
    const json = source.format === 'json' || source.format === 'jsonl';
    const byHand = options.mappingFile !== undefined || Object.keys(options.map ?? {}).length > 0;
    if (!(err instanceof EnrichError) || err.code !== 'MAPPING_INVALID' || json || byHand)
      throw err;
    const line = headerBelow(options, head);
    if (line === undefined) throw err;
    const flag = (options.words ?? LIBRARY_WORDS).option('headerRow');
    throw new EnrichError(err.code, err.message, {
      cause: err,
      hint: `Line ${line} reads as the header: run again with ${flag} ${line}. ${err.hint ?? ''}`.trim(),
      details: { ...err.details, headerRow: line },
      ...(err.location ? { location: err.location } : {}),
    });
  }
}

/** The line of the first of `head`'s rows whose cells, as column names alone, map enough to send a row. */
function headerBelow(options: MappingOptions, head: readonly InputRow[]): number | undefined {
  for (const row of head.slice(0, HEADER_BELOW_ROWS)) {
    try {
      detectMapping(options.kind, uniqueHeader(row.cells), [], {}, { words: options.words });
      return row.line;
    } catch {
      // not a header either
    }
  }
  return undefined;
}

/** Runs a step of mapping `source`, naming the file in the error of a column it lacks or cannot tell apart. */
function inFile<T>(source: InputSource, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (!(err instanceof EnrichError) || !err.code.startsWith('MAPPING_') || err.location?.file)
      throw err;
    throw new EnrichError(err.code, err.message, {
      cause: err,
      hint: err.hint,
      details: err.details,
      location: { ...err.location, file: source.name },
    });
  }
}

function sampleValues(
  mapping: ColumnMapping,
  rows: InputRow[],
): Partial<Record<ApiField, string[]>> {
  const out: Partial<Record<ApiField, string[]>> = {};
  const columns: [ApiField, number, (v: string) => string][] = Object.entries(mapping.fields).map(
    ([f, c]) => [f as ApiField, c as number, (v: string) => v],
  );
  if (mapping.split) {
    // Show what will be sent: the halves of the split name, not the whole name twice.
    const col = mapping.split.column;
    columns.push(
      ['first_name', col, (v) => splitFullName(v).first],
      ['last_name', col, (v) => splitFullName(v).last],
    );
  }
  for (const [field, col, show] of columns) {
    const seen: string[] = [];
    for (const r of rows) {
      const v = show((r.cells[col] ?? '').trim());
      if (v !== '' && !seen.includes(v)) seen.push(v);
      if (seen.length >= SAMPLE_VALUES) break;
    }
    out[field] = seen;
  }
  return out;
}
