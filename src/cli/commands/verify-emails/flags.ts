import { EMAIL_COLUMN_WORDS } from '../../../bulk/verify-column.js';
import type { VerifyRunOptions } from '../../../bulk/verify-options.js';
import { parseTypedDuration } from '../../../config/duration.js';
import type { Settings } from '../../../config/settings-table.js';
import { usageError } from '../../../errors.js';
import { FILE_FORMATS, type FileFormat } from '../../../io/file-format.js';
import type { ReadOptions } from '../../../io/read.js';
import type { RunWords } from '../../../pipeline/types.js';
import { parseIntegerFlag, refuseRefreshWithoutCache } from '../../flags.js';
import { MAP_SHAPES, parseDelimiter, parseMapFlags, settingFlag } from '../bulk/options.js';
import { CLI_WORDS } from '../bulk/resolve.js';

type Raw = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The CLI's words, with the email column named as its flag and no mapping file. */
export const VERIFY_WORDS: RunWords = {
  ...CLI_WORDS,
  ...EMAIL_COLUMN_WORDS,
  option: (name) =>
    name === 'concurrency'
      ? '--concurrency'
      : name === 'emailColumn'
        ? '--map email='
        : CLI_WORDS.option(name),
  map: (_field, column) => `--map email=${JSON.stringify(column)}`,
};

function format(flag: string, raw: unknown): FileFormat | undefined {
  if (raw === undefined) return undefined;
  const v = String(raw).trim().toLowerCase();
  if (!(FILE_FORMATS as readonly string[]).includes(v))
    throw usageError(`${flag}: expected one of ${FILE_FORMATS.join(', ')}, got "${String(raw)}"`);
  return v as FileFormat;
}

const NO_EMAIL_COLUMN_HINT =
  'Name the column as the header row spells it (quoted if it holds spaces), or leave out --map: the column is then found by its name and values (--dry-run shows which).';

/**
 * `--map email=Col` (or `business_email=Col`): the email column; any other field is refused,
 * and so is no column at all (`--map email=` would unmap the one column this command reads).
 */
function emailColumnOf(raw: unknown): string | undefined {
  const map = parseMapFlags((raw as string[] | undefined) ?? [], MAP_SHAPES['verify-emails']);
  let column: string | undefined;
  for (const [field, col] of Object.entries(map)) {
    if (field !== 'email' && field !== 'business_email')
      throw usageError(
        `--map ${field}=…: verify-emails maps only the email column (--map email="Column")`,
      );
    if (col === '')
      throw usageError(
        `--map ${field}=: no column after "${field}="; expected the name of the column holding the addresses, e.g. --map ${field}="Work Email"`,
        { hint: NO_EMAIL_COLUMN_HINT },
      );
    column = col;
  }
  return column;
}

/** The flags as the library's options (settings-backed ones left to `settingsOf`). */
export function verifyOptionsOf(
  raw: Raw,
): Omit<VerifyRunOptions, 'timeoutMs' | 'maxAgeMs' | 'formulaEscape'> {
  refuseRefreshWithoutCache(raw);
  return {
    output: str(raw.output) ?? '-',
    format: format('--format', raw.format),
    emailColumn: emailColumnOf(raw.map),
    concurrency:
      raw.concurrency === undefined
        ? undefined
        : parseIntegerFlag('--concurrency', raw.concurrency, 1, 64),
    maxCredits:
      raw.maxCredits === undefined
        ? undefined
        : parseIntegerFlag('--max-credits', raw.maxCredits, 0),
    restart: raw.restart === true,
    resendUnconfirmed: raw.resendUnconfirmed === true,
    cache: raw.cache !== false,
    refresh: raw.refresh === true,
    bom: typeof raw.bom === 'boolean' ? raw.bom : undefined,
    outputDelimiter:
      raw.outputDelimiter === undefined
        ? undefined
        : parseDelimiter(String(raw.outputDelimiter), '--output-delimiter'),
    words: VERIFY_WORDS,
  };
}

/** The settings the flags give explicitly (flags win over env, config and defaults). */
export function settingFlagsOf(raw: Raw): Partial<Settings> {
  const timeout = str(raw.timeout);
  const flag = <K extends keyof Settings>(prop: K, name: string, value: unknown) =>
    value === undefined ? undefined : settingFlag(prop, name, value);
  return {
    timeoutMs: timeout === undefined ? undefined : parseTypedDuration(timeout, '--timeout'),
    cacheMaxAgeMs: flag('cacheMaxAgeMs', '--max-age', raw.maxAge),
    rateLimit: flag('rateLimit', '--rate-limit', raw.rateLimit),
    formulaEscape: flag('formulaEscape', '--formula-escape', raw.formulaEscape),
  };
}

/** How the input is read (--input-format, --delimiter, --encoding, --header-row, --sheet). */
export function readOptionsOf(raw: Raw): ReadOptions {
  return {
    format: format('--input-format', raw.inputFormat),
    delimiter: raw.delimiter === undefined ? undefined : parseDelimiter(String(raw.delimiter)),
    encoding: str(raw.encoding),
    headerRow:
      raw.headerRow === undefined ? undefined : parseIntegerFlag('--header-row', raw.headerRow, 1),
    sheet: str(raw.sheet),
  };
}
