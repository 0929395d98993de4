import { getPaths } from '../config/paths.js';
import { parseInteger, parseSetting, settingDefault } from '../config/settings-table.js';
import type { Settings } from '../config/settings-table.js';
import { EnrichError } from '../errors.js';
import { formatOfExtension } from '../io/file-format.js';
import type { InputSource } from '../io/read.js';
import { checkOutputTarget, refuseInputAsOutput, STATUS_COLUMNS } from '../io/write.js';
import { tableColumns, writtenByBulkRun } from '../pipeline/join/output-columns.js';
import { FULL_NAME } from '../pipeline/mapping/map-columns.js';
import { resolveIdColumn, resolveMapping } from '../pipeline/mapping/resolve-mapping.js';
import { LIBRARY_WORDS } from '../pipeline/run/messages.js';
import { runsDirOf } from '../pipeline/run/run.js';
import type {
  CachePolicy,
  FileFormat,
  FormulaEscape,
  ResolvedRun,
  RunWords,
} from '../pipeline/types.js';
import { BULK_RUN_KEYS, type BulkRunOptions } from './options.js';
import {
  ignoredOutputOptions,
  outputBomOf,
  outputSepLineOf,
  outputDelimiterOf,
  outputFormatOf,
  refuseColumnClash,
  replaceEarlierOutput,
  resolveFields,
  withWarnings,
} from './output-plan.js';
import { requestMetadata } from './request-metadata.js';

export { outputFormatOf };

/** Refuses keys `allowed` does not name: a misspelt option must not be silently ignored. */
export function checkKeys(
  o: object,
  allowed: readonly string[],
  what: string,
  words: RunWords = LIBRARY_WORDS,
): void {
  const unknown = Object.keys(o).filter(
    (k) => !allowed.includes(k) && (o as Record<string, unknown>)[k] !== undefined,
  );
  if (unknown.length === 0) return;
  throw new EnrichError(
    'USAGE',
    `${what}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => words.option(k)).join(', ')}`,
    { hint: `Known options: ${allowed.join(', ')}.` },
  );
}

/** A setting's value from the options, checked against the settings table (or its default). */
export function setting<K extends keyof Settings>(
  prop: K,
  value: Settings[K] | undefined,
  words: RunWords,
): Settings[K] {
  if (value === undefined) return settingDefault(prop);
  try {
    return parseSetting(prop, value);
  } catch (err) {
    throw new EnrichError('USAGE', `${words.option(prop)}: ${(err as Error).message}`);
  }
}

/** An integer option in [min, max], non-negative by default (undefined stays undefined). */
export function count(
  name: string,
  value: number | undefined,
  words: RunWords,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseInteger(value, min, max);
  } catch (err) {
    throw new EnrichError('USAGE', `${words.option(name)}: ${(err as Error).message}`);
  }
}

/** How a run uses the results cache: `cache: false` neither reads nor writes, `refresh` only writes. */
export function cachePolicyOf(
  o: { cache?: boolean | undefined; refresh?: boolean | undefined; maxAgeMs?: number | undefined },
  words: RunWords,
): Readonly<CachePolicy> {
  return Object.freeze({
    read: o.cache !== false && o.refresh !== true,
    write: o.cache !== false,
    maxAgeMs: setting('cacheMaxAgeMs', o.maxAgeMs, words),
  });
}

/**
 * How every bulk command's output file is written, decided in one place: the target and
 * format, the delimiter (the format's, or the input's when the output names none), the BOM
 * and formula escaping.
 */
export function fileOutputOf(
  o: {
    output: string;
    format?: FileFormat;
    outputDelimiter?: string;
    bom?: boolean;
    formulaEscape?: FormulaEscape;
  },
  format: FileFormat,
  source: InputSource,
  words: RunWords,
) {
  const named = o.format !== undefined || (o.output !== '-' && !!formatOfExtension(o.output));
  return {
    target: o.output,
    format,
    delimiter: outputDelimiterOf(o.outputDelimiter, format, named, source),
    bom: outputBomOf(o.bom, format, source),
    sepLine: outputSepLineOf(format, source),
    formulaEscape: setting('formulaEscape', o.formulaEscape, words),
  };
}

/**
 * How a CSV/TSV `--rejects` file is written: as an output of that path would be (the input's
 * own delimiter, its BOM and `sep=` line), so that the rows to fix open in Excel as the input did.
 */
function rejectsDialectOf(
  o: { outputDelimiter?: string; bom?: boolean },
  rejects: string,
  source: InputSource,
  words: RunWords,
) {
  const format = formatOfExtension(rejects) ?? 'csv';
  // Only the options a rejects file shares with the output (not its --format: named by its path).
  const asked = {
    output: rejects,
    ...(o.outputDelimiter === undefined ? {} : { outputDelimiter: o.outputDelimiter }),
    ...(o.bom === undefined ? {} : { bom: o.bom }),
  };
  const { delimiter, bom, sepLine } = fileOutputOf(asked, format, source, words);
  return { ...(delimiter === undefined ? {} : { delimiter }), bom, sepLine };
}

/**
 * Resolves a bulk run once, before anything is sent: checks every option (unknown keys,
 * ranges from the settings table), reads the sample rows and maps the columns, and fixes
 * the run's identity, output and defaults. The dry run, the CLI run and `enrichFile` all
 * start here; nothing downstream decides any of it again.
 */
export async function resolveRun(o: BulkRunOptions, input: InputSource): Promise<ResolvedRun> {
  const words = o.words ?? LIBRARY_WORDS;
  checkKeys(o, BULK_RUN_KEYS, 'bulk run', words);
  const metadata = requestMetadata(o.kind, o.request, words); // bad request options fail first
  if (o.rejects === '-' && o.output === '-')
    throw new EnrichError(
      'USAGE',
      `${words.option('rejects')} - and the output both go to stdout: they would be mixed into one stream`,
      {
        hint: `Write one of them to a file: ${words.option('output')} enriched.csv, or ${words.option('rejects')} rejects.csv.`,
      },
    );
  await checkWrittenFiles(o, input, words);
  const format = outputFormatOf(o.format, o.output, input.format);
  if (o.rejects !== undefined) outputFormatOf(undefined, o.rejects, 'csv'); // .parquet refused too
  const fields = resolveFields(o.kind, o.fields, words);
  const prefix = setting('prefix', o.prefix, words);
  const source = withWarnings(
    replaceEarlierOutput(input, writtenByBulkRun(prefix), `${prefix}*`),
    ignoredOutputOptions(o, format, words),
  );
  const matches = o.kind === 'companies' ? Number(metadata.top_matches_returned) : 1;
  const explode = o.explode ?? false;
  refuseColumnClash(
    source,
    format,
    [
      ...STATUS_COLUMNS,
      ...tableColumns(o.kind, { format, prefix, fields, matches, explode }).extra,
    ],
    `Choose another prefix for the enriched columns (${words.option('prefix')} enriched_), or rename the column in the file.`,
  );
  const mapped = await resolveMapping(source, { ...o.mapping, kind: o.kind, words });
  const idColumn = resolveIdColumn(source, o.idColumn, words.option('idColumn'));
  const dedupe = o.dedupe ?? true;
  const split = mapped.mapping.split;
  const run: ResolvedRun = {
    kind: o.kind,
    source,
    mapping: mapped.mapping,
    names: mapped.names,
    samples: mapped.samples,
    // The identity journals on disk were keyed by: the saved mapping plus the split Name column.
    identity: {
      mapping: { ...mapped.names, ...(split ? { [FULL_NAME]: source.header[split.column] } : {}) },
      metadata,
      dedupe,
      idColumn: idColumn ?? null,
      // Absent by default, so journals of runs before the cache existed still resume.
      ...(o.cache === false ? { cache: 'off' } : o.refresh ? { cache: 'refresh' } : {}),
    },
    validate: { header: source.header },
    metadata,
    creditsPerRow: o.kind === 'companies' ? Number(metadata.top_matches_returned) : 1,
    batchSize: setting('batchSize', o.batchSize, words),
    concurrency: setting('concurrency', o.concurrency, words),
    dedupe,
    idColumn,
    maxCredits: count('maxCredits', o.maxCredits, words),
    // 0 (a library caller's): one look at each job, no waiting; the setting itself is > 0.
    timeoutMs: o.timeoutMs === 0 ? 0 : setting('timeoutMs', o.timeoutMs, words),
    wait: o.wait ?? true,
    restart: o.restart ?? false,
    resendUnconfirmed: o.resendUnconfirmed ?? false,
    cache: cachePolicyOf(o, words),
    runsDir: o.runsDir ?? runsDirOf(getPaths().stateDir),
    runRetentionMs: setting('runRetentionMs', o.runRetentionMs, words),
    command: o.command ?? `enrich ${o.kind} ${source.name} -o ${o.output}`,
    output: Object.freeze({
      ...fileOutputOf(o, format, source, words),
      explode,
      matches,
      prefix,
      ...(fields ? { fields } : {}),
      rejects: o.rejects,
      ...(o.rejects === undefined
        ? {}
        : { rejectsDialect: rejectsDialectOf(o, o.rejects, source, words) }),
    }),
    words,
  };
  return Object.freeze(run);
}

/**
 * Before anything is sent: a target that cannot be written would fail only at the end, and the
 * input file itself is still being read while the output is written. Each file written is
 * checked: not the input, and not another of them (one would be lost).
 */
async function checkWrittenFiles(
  o: BulkRunOptions,
  input: InputSource,
  words: RunWords,
): Promise<void> {
  const targets = [
    [o.output, { as: words.option('output'), example: 'enriched.csv' }],
    [o.rejects, { as: words.option('rejects'), example: 'rejects.csv' }],
    [o.mapping?.saveMapping, { as: words.option('saveMapping'), example: 'mapping.json' }],
  ] as const;
  const written: { as: string; path: string }[] = [];
  for (const [target, naming] of targets) {
    if (target === undefined) continue;
    const checked = await checkOutputTarget(target, naming);
    refuseInputAsOutput(input.file, checked);
    const same = checked.path !== '' && written.find((w) => w.path === checked.path);
    if (same)
      throw new EnrichError(
        'USAGE',
        `${naming.as} ${target} is the file ${same.as} writes too: one of them would be lost`,
        { hint: `Give ${naming.as} a file of its own, such as ${naming.example}.` },
      );
    written.push({ as: naming.as, path: checked.path });
  }
}
