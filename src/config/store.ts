import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type Conf from 'conf';
import { EnrichError } from '../errors.js';
import { secureConfigFiles } from './secure-dir.js';

/** One profile as stored: setting names (`base_url`...) and `api_key`. */
export type StoredProfile = Record<string, unknown>;

/** The config file: profiles by name, each with its settings and key. */
export interface ConfigStore {
  readonly path: string;
  /** Mode repairs made when the store was opened. */
  readonly repairs: readonly string[];
  /** The stored profile, or undefined when there is none by that name. */
  readProfile(name: string): StoredProfile | undefined;
  /** The names of the stored profiles, sorted. */
  profileNames(): string[];
  /** Sets one value in a profile (created when missing) and writes the file. */
  setValue(profile: string, key: string, value: unknown): Promise<void>;
  /** Removes one value; returns false when it was not set. */
  unsetValue(profile: string, key: string): Promise<boolean>;
}

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Checks a profile name, or throws a usage error naming the rule. */
export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new EnrichError(
      'USAGE',
      `profile: expected letters, digits, "_", "." or "-" (at most 64, starting with a letter or digit), got "${name}"`,
    );
  }
  return name;
}

/** ` at line L, column C` of the position a JSON.parse error names, or '' when it names none. */
function lineAndColumn(err: unknown, text: string): string {
  const m = / at position (\d+)/.exec(err instanceof Error ? err.message : '');
  if (!m) return '';
  const before = text.slice(0, Number(m[1])).split('\n');
  return ` at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

type ConfFile = Conf<{ profiles: Record<string, StoredProfile> }>;

/** conf over `config.json` (it writes atomically, with the file's mode). */
async function loadConf(configDir: string): Promise<ConfFile> {
  const { default: Conf } = await import('conf');
  return new Conf<{ profiles: Record<string, StoredProfile> }>({
    cwd: configDir,
    projectName: 'enrich',
    configName: 'config',
    configFileMode: 0o600,
    accessPropertiesByDotNotation: false,
    clearInvalidConfig: false,
    watch: false,
  });
}

/** Every profile of the config file at `path` ({} when there is none). */
function readProfiles(path: string): Record<string, StoredProfile> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return {};
    throw new EnrichError(
      'CONFIG_INVALID',
      `cannot read the config file: ${(err as Error).message}`,
      {
        location: { file: path },
        cause: err,
      },
    );
  }
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch (err) {
    // The parser's message quotes a piece of the file, which may be the key: only its
    // position is used, and the parser error is not kept as the cause.
    throw new EnrichError(
      'CONFIG_INVALID',
      `config file is not valid JSON${lineAndColumn(err, text)}`,
      {
        location: { file: path },
        hint: `fix or delete ${path}, then run \`enrich auth login\` again`,
      },
    );
  }
  // Hand-edited to something else than an object (`[]`, `null`, `3`): never read as "no profiles".
  if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) {
    throw new EnrichError(
      'CONFIG_INVALID',
      'config file: expected a JSON object ({"profiles": {…}})',
      {
        location: { file: path },
        hint: `fix or delete ${path}, then run \`enrich auth login\` again`,
      },
    );
  }
  const profiles = (whole as { profiles?: unknown }).profiles;
  if (profiles === undefined) return {};
  if (profiles === null || typeof profiles !== 'object' || Array.isArray(profiles)) {
    throw new EnrichError('CONFIG_INVALID', 'config file: "profiles" must be an object', {
      location: { file: path },
    });
  }
  return profiles as Record<string, StoredProfile>;
}

/**
 * The profile the file holds under `name`: undefined when it has none, also for a name every
 * object inherits a member by (`constructor`, `valueOf`), which `profiles[name]` would read.
 */
function ownProfile(
  profiles: Record<string, StoredProfile>,
  name: string,
): StoredProfile | undefined {
  return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
}

/**
 * Opens `config.json` in `configDir` with conf (file 0600, directory 0700, both checked
 * and repaired on every open).
 */
export function openConfigStore(configDir: string): ConfigStore {
  const path = join(configDir, 'config.json');
  const repairs = secureConfigFiles(configDir, path);
  // conf costs ~100 ms to load, so reads parse the file directly and conf is loaded only
  // when something is written.
  let conf: Promise<ConfFile> | undefined;
  const readAll = () => readProfiles(path);
  const writeAll = async (profiles: Record<string, StoredProfile>) => {
    (await (conf ??= loadConf(configDir))).set('profiles', profiles);
    // A file conf created may carry the umask's mode on some systems; insist on 0600.
    secureConfigFiles(configDir, path);
  };
  return {
    path,
    repairs,
    readProfile(name) {
      const p = ownProfile(readAll(), checkProfileName(name));
      if (p === undefined) return undefined;
      if (p === null || typeof p !== 'object' || Array.isArray(p)) {
        throw new EnrichError(
          'CONFIG_INVALID',
          `config file: profile "${name}" must be an object`,
          {
            location: { file: path },
          },
        );
      }
      return p;
    },
    profileNames: () => Object.keys(readAll()).sort(),
    async setValue(profile, key, value) {
      const all = readAll();
      const current = ownProfile(all, checkProfileName(profile)) ?? {};
      all[profile] = { ...current, [key]: value };
      await writeAll(all);
    },
    async unsetValue(profile, key) {
      const all = readAll();
      const current = ownProfile(all, checkProfileName(profile));
      if (!current || !Object.hasOwn(current, key)) return false;
      const { [key]: _removed, ...rest } = current;
      all[profile] = rest;
      await writeAll(all);
      return true;
    },
  };
}
