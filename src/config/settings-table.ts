import { parseTypedDuration, formatDuration } from './duration.js';

/** Settings a profile, the environment or flags may set (the key is handled apart). */
export interface Settings {
  baseUrl: string | undefined;
  batchSize: number;
  /** Bulk jobs in flight; undefined: as many as make the service finish sooner (up to 32). */
  concurrency: number | undefined;
  timeoutMs: number;
  formulaEscape: 'auto' | 'always' | 'never';
  prefix: string;
  /** Ceiling on requests per second to the service; undefined: no ceiling of our own. */
  rateLimit: number | undefined;
  /** How old a cached answer may be and still be used instead of a lookup (ms). */
  cacheMaxAgeMs: number;
  /** How long journals and spools of finished runs are kept (ms). */
  runRetentionMs: number;
}

/** One setting: its name in the config file and `enrich config`, its env var, its rules. */
export interface SettingSpec<K extends keyof Settings = keyof Settings> {
  key: string;
  prop: K;
  env: string;
  default: Settings[K];
  description: string;
  /** Parses a value from text (env, `config set`) or JSON (config file); throws a message. */
  parse(value: unknown): Settings[K];
  /** Formats a value for people and for the config file. */
  format(value: Settings[K]): string;
}

/**
 * The one integer parser of the tool (settings, flags and library options alike): an
 * integer in [min, max] from a number or its text; throws a message saying what was expected.
 */
export function parseInteger(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = String(value).trim();
  const n = typeof value === 'number' ? value : /^[-+]?\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
    throw new Error(`expected ${range}, got ${JSON.stringify(value)}`);
  }
  return n;
}

function integer(min: number, max: number) {
  return (value: unknown): number => parseInteger(value, min, max);
}

/** Checks a base URL: http(s), no credentials, query or fragment; trailing slashes dropped. */
export function parseBaseUrlSetting(value: unknown): string {
  const text = String(value).trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`expected an http(s) URL such as https://api.example.com, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`expected an http:// or https:// URL, got "${text}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new Error('expected a URL without credentials, query or fragment');
  }
  return url.href.replace(/\/+$/, '');
}

const str = (v: unknown) => String(v);

/** Parses a rate in requests per second: a positive number (0.5 is one request every 2 s). */
export function parseRate(value: unknown): number {
  const text = String(value).trim();
  const n = typeof value === 'number' ? value : Number(text);
  if (text === '' || !Number.isFinite(n) || n <= 0 || n > 100_000) {
    throw new Error(
      `expected requests per second, a number above 0 (e.g. 5 or 0.5), got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/**
 * Checks the prefix of the enriched columns: a blank one would give them the record's bare
 * field names (`email`, `title`), which neither the user nor a later run of an enriched file
 * could tell from the input's own columns.
 */
function parsePrefix(value: unknown): string {
  const t = String(value);
  if (t.trim() === '')
    throw new Error(
      `expected a prefix such as enriched_, got ${JSON.stringify(t)}: without one the enriched columns would have bare names (email, title), not told apart from the input's`,
    );
  if (t.length > 64 || /[\r\n]/.test(t))
    throw new Error('expected at most 64 characters on one line');
  return t;
}

/** Every setting, in the order `enrich config list` shows them. */
export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'base_url',
    prop: 'baseUrl',
    env: 'ENRICH_BASE_URL',
    default: undefined,
    description: 'service base URL (flag --base-url)',
    parse: parseBaseUrlSetting,
    format: (v) => (v === undefined ? '' : str(v)),
  },
  {
    key: 'batch_size',
    prop: 'batchSize',
    env: 'ENRICH_BATCH_SIZE',
    default: 1000,
    description: 'records per bulk job',
    parse: integer(1, 10_000),
    format: str,
  },
  {
    key: 'concurrency',
    prop: 'concurrency',
    env: 'ENRICH_CONCURRENCY',
    default: undefined,
    description: 'bulk jobs in flight at once (auto, the default: adaptive, up to 32)',
    // `auto` is the default's own name: the adaptive number of jobs in flight.
    parse: (v) => (String(v).trim().toLowerCase() === 'auto' ? undefined : parseInteger(v, 1, 64)),
    format: (v) => (v === undefined ? 'auto' : str(v)),
  },
  {
    key: 'timeout',
    prop: 'timeoutMs',
    env: 'ENRICH_TIMEOUT',
    default: 2 * 3_600_000,
    description: 'how long a bulk run waits for its jobs (500ms, 30s, 5m, 2h)',
    parse: (v) => {
      const ms = typeof v === 'number' ? v : parseTypedDuration(String(v));
      if (!Number.isFinite(ms) || ms <= 0)
        throw new Error(`expected a positive duration, got ${String(v)}`);
      return ms;
    },
    format: (v) => formatDuration(Number(v)),
  },
  {
    key: 'cache_max_age',
    prop: 'cacheMaxAgeMs',
    env: 'ENRICH_CACHE_MAX_AGE',
    default: 30 * 86_400_000,
    description:
      'answers older than this are looked up again instead of taken from the results cache (0s: always)',
    parse: durationAtLeast(0),
    format: (v) => formatDays(Number(v)),
  },
  {
    key: 'run_retention',
    prop: 'runRetentionMs',
    env: 'ENRICH_RUN_RETENTION',
    default: 7 * 86_400_000,
    description: 'how long journals and results of finished runs are kept (7d)',
    parse: durationAtLeast(0),
    format: (v) => formatDays(Number(v)),
  },
  {
    key: 'formula_escape',
    prop: 'formulaEscape',
    env: 'ENRICH_FORMULA_ESCAPE',
    default: 'auto',
    description: 'escape spreadsheet formulas in service values: auto, always or never',
    parse: (v) => {
      const t = String(v).trim().toLowerCase();
      if (t !== 'auto' && t !== 'always' && t !== 'never') {
        throw new Error(`expected one of auto, always, never, got "${String(v)}"`);
      }
      return t;
    },
    format: str,
  },
  {
    key: 'prefix',
    prop: 'prefix',
    env: 'ENRICH_PREFIX',
    default: 'enriched_',
    description: 'prefix of the enriched output columns',
    parse: parsePrefix,
    format: str,
  },
  {
    key: 'rate_limit',
    prop: 'rateLimit',
    env: 'ENRICH_RATE_LIMIT',
    default: undefined,
    description: 'most requests per second sent to the service (flag --rate-limit)',
    parse: parseRate,
    format: (v) => (v === undefined ? '' : str(v)),
  },
] as SettingSpec[];

/** A duration parser (text or ms) that refuses values below `min` ms. */
function durationAtLeast(min: number): (v: unknown) => number {
  return (v) => {
    const ms = typeof v === 'number' ? v : parseTypedDuration(String(v));
    if (!Number.isFinite(ms) || ms < min) throw new Error(`expected a duration, got ${String(v)}`);
    return ms;
  };
}

/** Whole days as `30d`, anything else as formatDuration does. */
function formatDays(ms: number): string {
  return ms > 0 && ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : formatDuration(ms);
}

/** The setting named `key` (config file form, e.g. `batch_size`), if there is one. */
export function findSetting(key: string): SettingSpec | undefined {
  return SETTINGS.find((s) => s.key === key);
}

/** The known setting names, for error messages. */
export const SETTING_KEYS: readonly string[] = SETTINGS.map((s) => s.key);

/** Parses a value of setting `prop` (its range and form from the table); throws a message. */
export function parseSetting<K extends keyof Settings>(prop: K, value: unknown): Settings[K] {
  return (SETTINGS.find((s) => s.prop === prop) as SettingSpec<K>).parse(value);
}

/** The default of a setting (what a run uses when no flag, env var or config file sets it). */
export function settingDefault<K extends keyof Settings>(prop: K): Settings[K] {
  return (SETTINGS.find((s) => s.prop === prop) as SettingSpec<K>).default;
}
