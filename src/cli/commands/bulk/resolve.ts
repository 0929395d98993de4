import type { BulkRunOptions } from '../../../bulk/options.js';
import type { ResolvedSettings } from '../../../config/settings.js';
import type { InputSource } from '../../../io/read.js';
import type { BulkKind, ResolvedRun, RunWords } from '../../../pipeline/types.js';
import type { GlobalOptions } from '../../globals.js';
import { warnAbout } from '../../output.js';
import { readOptionsOf, requestOptionsOf, settingFlags, type BulkOptions } from './options.js';

/** Library option names as the command line spells them. */
const FLAG_OF: Readonly<Record<string, string>> = {
  maxCredits: '--max-credits',
  timeoutMs: '--timeout',
  batchSize: '--batch-size',
  concurrency: '--concurrency',
  formulaEscape: '--formula-escape',
  prefix: '--prefix',
  requireEmail: '--require-email',
  requireMobile: '--require-mobile',
  mobile: '--mobile',
  top: '--top',
  idColumn: '--id-column',
  rejects: '--rejects',
  output: '-o',
  restart: '--restart',
  resendUnconfirmed: '--resend-unconfirmed',
  saveMapping: '--save-mapping',
  mappingFile: '--mapping',
  maxAgeMs: '--max-age',
  cacheMaxAgeMs: '--max-age',
  refresh: '--refresh',
  cache: '--no-cache',
  fields: '--fields',
  outputDelimiter: '--output-delimiter',
  bom: '--bom',
  headerRow: '--header-row',
};

/** The CLI's words for the run's messages: flags and "the same command". */
export const CLI_WORDS: RunWords = {
  resume: 'run the same command again',
  restart: 're-run with --restart',
  option: (name) => FLAG_OF[name] ?? name,
  map: (field, column) => `--map ${field}=${JSON.stringify(column)}`,
  kind: (kind) => `enrich ${kind}`,
  fieldName: (field) => field,
  mappingFile: true,
};

/** The command line that resumes this run (the same command, without --restart). */
export function resumeCommand(argv: readonly string[]): string {
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return ['enrich', ...argv.filter((a) => a !== '--restart').map(quote)].join(' ');
}

/** The flags and settings of a bulk command as the library's one input type. */
export function bulkRunOptionsOf(
  kind: BulkKind,
  o: BulkOptions,
  s: ResolvedSettings,
  extra: { runsDir?: string; command?: string } = {},
): BulkRunOptions {
  return {
    kind,
    output: o.output ?? '-',
    mapping: { map: o.map, mappingFile: o.mappingFile, saveMapping: o.saveMapping },
    idColumn: o.idColumn,
    request: requestOptionsOf(o),
    batchSize: s.batchSize,
    concurrency: s.concurrency,
    dedupe: o.dedupe,
    maxCredits: o.maxCredits,
    timeoutMs: s.timeoutMs,
    wait: o.wait,
    restart: o.restart,
    resendUnconfirmed: o.resendUnconfirmed,
    cache: o.cache,
    refresh: o.refresh,
    maxAgeMs: s.cacheMaxAgeMs,
    runRetentionMs: s.runRetentionMs,
    format: o.format,
    bom: o.bom,
    outputDelimiter: o.outputDelimiter,
    fields: o.fields,
    formulaEscape: s.formulaEscape,
    explode: o.explode,
    prefix: s.prefix,
    rejects: o.rejects,
    words: CLI_WORDS,
    ...extra,
  };
}

/**
 * Opens the input of a bulk command and resolves the run: settings (config < env <
 * flags), mapping, output. Everything a usage error can be found in is checked here,
 * before a key or a service is needed. The caller closes `source`.
 */
export async function openBulkRun(
  kind: BulkKind,
  input: string,
  options: BulkOptions,
  globals: GlobalOptions,
  extra: {
    runsDir?: string;
    command?: string;
    /** Told of what the run's passes over the input find later (`ReadOptions.onWarning`). */
    onWarning?: (message: string) => void;
  } = {},
): Promise<{ source: InputSource; run: ResolvedRun; settings: ResolvedSettings }> {
  const [{ openInput }, { resolveSettings }, { resolveRun }] = await Promise.all([
    import('../../../io/read.js'),
    import('../../../config/settings.js'),
    import('../../../bulk/resolve-run.js'),
  ]);
  const settings = resolveSettings({ globals, flags: settingFlags(options) });
  const { onWarning, ...runExtra } = extra;
  const source = await openInput(input, {
    ...readOptionsOf(options),
    onWarning: onWarning ?? ((w) => warnAbout([w])),
  });
  try {
    warnAbout(source.warnings);
    const run = await resolveRun(bulkRunOptionsOf(kind, options, settings, runExtra), source);
    // The run may read the input without an earlier run's output columns: it says so.
    warnAbout(run.source.warnings.slice(source.warnings.length));
    return { source: run.source, run, settings };
  } catch (err) {
    await source.close();
    throw err;
  }
}
