import { EnrichError, usageError } from '../errors.js';
import { getPaths } from './paths.js';
import { SETTINGS, SETTING_KEYS, type Settings } from './settings-table.js';
import { checkProfileName, openConfigStore, type StoredProfile } from './store.js';

export type { Settings } from './settings-table.js';

/** Where a value came from. */
export type SettingSource = 'default' | 'file' | 'env' | 'flag';

/** Names in `sources`: every setting, plus the profile and the key. */
export type SettingName = keyof Settings | 'profile' | 'apiKey';

/** Settings after precedence (flags > env > profile > defaults); read-only. */
export interface ResolvedSettings extends Readonly<Settings> {
  readonly profile: string;
  /** Never print or log this. */
  readonly apiKey: string | undefined;
  readonly apiKeySource: 'env' | 'file' | 'none';
  /**
   * Set when the profile holds a key saved with another service (its base_url's origin) than
   * the one a flag or env var points at now: that key is not used (apiKey stays unset), as a
   * key is sent only to the origin it was saved for.
   */
  readonly keyWithheld?: { savedFor: string; origin: string };
  readonly configPath: string;
  readonly sources: Readonly<Record<SettingName, SettingSource>>;
  /** Config file/directory mode repairs made while reading. */
  readonly repairs: readonly string[];
  /**
   * Set when the profile was chosen (`--profile`, ENRICH_PROFILE) and the config file has none
   * by that name (a typo, or never saved): the names it has. Its settings are the defaults.
   */
  readonly unknownProfile?: readonly string[];
}

/** `no profile "x" in <file> (its profiles: a, b)`, for a profile chosen that is not stored. */
export function unknownProfileText(s: ResolvedSettings): string | undefined {
  if (!s.unknownProfile) return undefined;
  const known = s.unknownProfile.length > 0 ? s.unknownProfile.join(', ') : 'none';
  return `no profile "${s.profile}" in ${s.configPath} (its profiles: ${known})`;
}

/** Profile keys that are not settings but may be stored. */
const STORED_EXTRAS = new Set(['api_key']);

/** `--batch-size` for `batchSize`. */
export function flagName(prop: string): string {
  if (prop === 'timeoutMs') return '--timeout';
  if (prop === 'cacheMaxAgeMs') return '--max-age';
  return `--${prop.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Checks the profile's name, naming what chose it (`--profile`, ENRICH_PROFILE) when it is bad. */
function checkChosenProfile(name: string, by: SettingSource): void {
  try {
    checkProfileName(name);
  } catch (err) {
    if (!(err instanceof EnrichError) || by === 'default') throw err;
    const what = by === 'env' ? 'ENRICH_PROFILE' : '--profile';
    throw new EnrichError(err.code, err.message.replace(/^profile:/, `${what}:`));
  }
}

/** Checks a stored profile for unknown keys and a well-formed key. */
function checkStored(profile: StoredProfile, name: string, path: string): void {
  for (const key of Object.keys(profile)) {
    if (!SETTING_KEYS.includes(key) && !STORED_EXTRAS.has(key)) {
      throw new EnrichError(
        'CONFIG_INVALID',
        `config file: profile "${name}" has unknown setting "${key}" (expected one of: ${SETTING_KEYS.join(', ')})`,
        { location: { file: path }, hint: `run \`enrich config unset ${key} --profile ${name}\`` },
      );
    }
  }
  if (profile.api_key !== undefined && typeof profile.api_key !== 'string') {
    throw new EnrichError(
      'CONFIG_INVALID',
      `config file: profile "${name}": api_key must be a string`,
      {
        location: { file: path },
        hint: 'run `enrich auth login` again',
      },
    );
  }
}

/** The origin of a URL, or undefined for one that does not parse. */
function originOf(url: unknown): string | undefined {
  try {
    return typeof url === 'string' ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The saved key's origin and the one asked for, when the profile's key was saved with a
 * base_url on another origin than the flag's or env var's: DESIGN.md 5, the key goes only to
 * its service's origin (a typo'd or left-over ENRICH_BASE_URL must not receive it).
 */
function withheldKey(
  stored: StoredProfile,
  baseUrl: unknown,
  source: SettingSource | undefined,
): { savedFor: string; origin: string } | undefined {
  if (typeof stored.api_key !== 'string' || source === 'file') return undefined;
  const savedFor = originOf(stored.base_url);
  const origin = originOf(baseUrl);
  return savedFor && origin && savedFor !== origin ? { savedFor, origin } : undefined;
}

/**
 * Resolves every setting with its source: flags > env (ENRICH_*) > the profile in the
 * config file > defaults. Unknown keys (in flags or in the file) are errors.
 */
export function resolveSettings(input: {
  /** The global flags that choose the profile and the service (`--profile`, `--base-url`). */
  globals: { profile?: string; baseUrl?: string };
  env?: NodeJS.ProcessEnv;
  flags?: Partial<Settings>;
}): ResolvedSettings {
  const env = input.env ?? process.env;
  const flags: Record<string, unknown> = { ...input.flags };
  if (input.globals.baseUrl !== undefined) flags.baseUrl = input.globals.baseUrl;
  for (const k of Object.keys(flags)) {
    if (!SETTINGS.some((s) => s.prop === k)) throw usageError(`unknown setting "${k}"`);
  }
  const sources: Partial<Record<SettingName, SettingSource>> = {};
  let profile = 'default';
  sources.profile = 'default';
  if (input.globals.profile !== undefined) {
    profile = input.globals.profile;
    sources.profile = 'flag';
  } else if (env.ENRICH_PROFILE) {
    profile = env.ENRICH_PROFILE;
    sources.profile = 'env';
  }
  checkChosenProfile(profile, sources.profile);

  const store = openConfigStore(getPaths(env).configDir);
  const found = store.readProfile(profile);
  const stored = found ?? {};
  checkStored(stored, profile, store.path);
  const unknownProfile =
    found === undefined && sources.profile !== 'default' ? store.profileNames() : undefined;

  const values: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    let value: unknown = spec.default;
    let source: SettingSource = 'default';
    try {
      if (flags[spec.prop] !== undefined) {
        source = 'flag';
        value = spec.parse(flags[spec.prop]);
      } else if (env[spec.env] !== undefined && env[spec.env] !== '') {
        source = 'env';
        value = spec.parse(env[spec.env]);
      } else if (stored[spec.key] !== undefined) {
        source = 'file';
        value = spec.parse(stored[spec.key]);
      }
    } catch (err) {
      if (source === 'flag') throw usageError(`${flagName(spec.prop)}: ${message(err)}`);
      if (source === 'env') throw new EnrichError('CONFIG_INVALID', `${spec.env}: ${message(err)}`);
      throw new EnrichError('CONFIG_INVALID', `config file: ${spec.key}: ${message(err)}`, {
        location: { file: store.path },
        hint: `run \`enrich config set ${spec.key} <value>\` or \`enrich config unset ${spec.key}\``,
      });
    }
    values[spec.prop] = value;
    sources[spec.prop] = source;
  }

  const envKey = env.ENRICH_API_KEY?.trim();
  const keyWithheld = envKey ? undefined : withheldKey(stored, values.baseUrl, sources.baseUrl);
  const fileKey = typeof stored.api_key === 'string' && !keyWithheld ? stored.api_key : undefined;
  const apiKey = envKey ? envKey : fileKey;
  const apiKeySource = envKey ? 'env' : fileKey ? 'file' : 'none';
  sources.apiKey = envKey ? 'env' : fileKey ? 'file' : 'default';

  return Object.freeze({
    ...(values as unknown as Settings),
    profile,
    apiKey,
    apiKeySource,
    ...(keyWithheld ? { keyWithheld } : {}),
    configPath: store.path,
    sources: Object.freeze(sources as Record<SettingName, SettingSource>),
    repairs: store.repairs,
    ...(unknownProfile ? { unknownProfile } : {}),
  });
}
