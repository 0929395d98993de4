import { getPaths } from '../config/paths.js';
import { EnrichError } from '../errors.js';
import type { InputSource, ReadOptions } from '../io/read.js';
import { checkOutputTarget, refuseInputAsOutput, STATUS_COLUMNS } from '../io/write.js';
import { LIBRARY_WORDS } from '../pipeline/run/messages.js';
import { runsDirOf } from '../pipeline/run/run.js';
import type { FileFormat, FormulaEscape, RunWords } from '../pipeline/types.js';
import { VERIFY_KIND } from '../pipeline/verify/run-verify.js';
import type { VerifyRun } from '../pipeline/verify/types.js';
import { VERIFY_COLUMNS } from '../pipeline/verify/write-verified.js';
import {
  ignoredOutputOptions,
  outputFormatOf,
  refuseColumnClash,
  replaceEarlierOutput,
  withWarnings,
} from './output-plan.js';
import { cachePolicyOf, checkKeys, count, fileOutputOf, setting } from './resolve-run.js';
import { EMAIL_COLUMN_WORDS, resolveEmailColumn } from './verify-column.js';

/** A verification run as its caller states it (`verifyEmailsFile`, `enrich verify-emails`). */
export interface VerifyRunOptions {
  /** The output path, or `-` for stdout. */
  output: string;
  read?: ReadOptions;
  /** The column holding the addresses (`--map email=Col`); detected like `contacts` does by default. */
  emailColumn?: string;
  /** Verifications in flight at once (8; 1 to 64). */
  concurrency?: number;
  /** Send at most this many verifications (one credit each at worst). */
  maxCredits?: number;
  /** How long the run may take, in ms (setting timeout, 2 h). */
  timeoutMs?: number;
  restart?: boolean;
  /** Send again addresses whose answer was lost (they may be charged twice). */
  resendUnconfirmed?: boolean;
  cache?: boolean;
  refresh?: boolean;
  maxAgeMs?: number;
  cacheDir?: string;
  runsDir?: string;
  runRetentionMs?: number;
  format?: FileFormat;
  bom?: boolean;
  outputDelimiter?: string;
  formulaEscape?: FormulaEscape;
  command?: string;
  words?: RunWords;
}

export const VERIFY_RUN_KEYS: readonly (keyof VerifyRunOptions)[] = [
  'output',
  'read',
  'emailColumn',
  'concurrency',
  'maxCredits',
  'timeoutMs',
  'restart',
  'resendUnconfirmed',
  'cache',
  'refresh',
  'maxAgeMs',
  'cacheDir',
  'runsDir',
  'runRetentionMs',
  'format',
  'bom',
  'outputDelimiter',
  'formulaEscape',
  'command',
  'words',
];

/** The library's words, with the email column named as its option. */
const VERIFY_LIBRARY_WORDS: RunWords = {
  ...LIBRARY_WORDS,
  ...EMAIL_COLUMN_WORDS,
  map: (_field, column) => `emailColumn: ${JSON.stringify(column)}`,
};

/** Verifications in flight by default: single requests are short, and the rate limiter paces them. */
export const VERIFY_CONCURRENCY = 8;
const MAX_CONCURRENCY = 64;

/**
 * Resolves a verification run once, before anything is sent: options checked, the email
 * column found, the output checked, the run's identity fixed.
 */
export async function resolveVerifyRun(
  o: VerifyRunOptions,
  input: InputSource,
): Promise<VerifyRun> {
  const words = o.words ?? VERIFY_LIBRARY_WORDS;
  checkKeys(o, VERIFY_RUN_KEYS, 'verify run', words);
  if (o.refresh === true && o.cache === false)
    throw new EnrichError(
      'USAGE',
      `${words.option('refresh')} and ${words.option('cache')}: choose one`,
    );
  if (o.output !== undefined) refuseInputAsOutput(input.file, await checkOutputTarget(o.output));
  const format = outputFormatOf(o.format, o.output, input.format);
  // An earlier output of this command (or a bulk one) verified again: its columns are replaced.
  const written = (c: string) => (VERIFY_COLUMNS as readonly string[]).includes(c);
  const source = withWarnings(
    replaceEarlierOutput(input, written, 'verify_*'),
    ignoredOutputOptions(o, format, words),
  );
  refuseColumnClash(
    source,
    format,
    [...STATUS_COLUMNS, ...VERIFY_COLUMNS],
    "Rename the column in the file: verify-emails writes these columns after the input's.",
  );
  const { column, name } = await resolveEmailColumn(source, o.emailColumn, words);
  const run: VerifyRun = {
    source,
    column,
    columnName: name,
    concurrency:
      count('concurrency', o.concurrency, words, 1, MAX_CONCURRENCY) ?? VERIFY_CONCURRENCY,
    maxCredits: count('maxCredits', o.maxCredits, words),
    timeoutMs: setting('timeoutMs', o.timeoutMs, words),
    restart: o.restart ?? false,
    resendUnconfirmed: o.resendUnconfirmed ?? false,
    cache: cachePolicyOf(o, words),
    runsDir: o.runsDir ?? runsDirOf(getPaths().stateDir),
    command: o.command ?? `enrich ${VERIFY_KIND} ${source.name} -o ${o.output}`,
    identity: {
      column: name,
      ...(o.cache === false ? { cache: 'off' } : o.refresh ? { cache: 'refresh' } : {}),
    },
    output: Object.freeze(fileOutputOf(o, format, source, words)),
    words,
  };
  return Object.freeze(run);
}

/** How long finished verification runs' journals are kept (setting run_retention). */
export function runRetentionOf(o: VerifyRunOptions): number {
  return setting('runRetentionMs', o.runRetentionMs, o.words ?? LIBRARY_WORDS);
}
