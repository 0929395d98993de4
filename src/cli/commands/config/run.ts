import { usageError, type EnrichError } from '../../../errors.js';
import { maskKey } from '../../../config/mask-key.js';
import { getPaths } from '../../../config/paths.js';
import {
  resolveSettings,
  unknownProfileText,
  type ResolvedSettings,
  type SettingSource,
} from '../../../config/settings.js';
import { findSetting, SETTINGS, SETTING_KEYS } from '../../../config/settings-table.js';
import { checkProfileName, openConfigStore } from '../../../config/store.js';
import type { GlobalOptions } from '../../globals.js';
import { printJson, say } from '../../output.js';

interface Row {
  key: string;
  value: string;
  source: SettingSource;
}

/** Every setting of the resolved profile with its source; the key masked. */
function rows(s: ResolvedSettings): Row[] {
  const out: Row[] = SETTINGS.map((spec) => ({
    key: spec.key,
    value: spec.format(s[spec.prop] as never),
    source: s.sources[spec.prop],
  }));
  out.push({ key: 'api_key', value: s.apiKey ? maskKey(s.apiKey) : '', source: s.sources.apiKey });
  return out;
}

function unknownKey(key: string): EnrichError {
  return usageError(
    `unknown setting "${key}" (expected one of: ${SETTING_KEYS.join(', ')}, api_key)`,
  );
}

/** A profile chosen that the config file does not have: its values are the defaults, said so. */
function sayUnknownProfile(globals: GlobalOptions, s: ResolvedSettings): void {
  const unknown = unknownProfileText(s);
  if (unknown) say(globals.quiet, `enrich: ${unknown}: what is shown is what it would have`);
}

/** `enrich config list`: every setting with its value and source. */
export function runList(globals: GlobalOptions): number {
  const s = resolveSettings({ globals });
  sayUnknownProfile(globals, s);
  const all = rows(s);
  if (globals.json) {
    printJson({
      profile: s.profile,
      config_path: s.configPath,
      settings: Object.fromEntries(all.map((r) => [r.key, { value: r.value, source: r.source }])),
    });
    return 0;
  }
  const width = Math.max(...all.map((r) => r.key.length));
  const vwidth = Math.max(...all.map((r) => r.value.length));
  const lines = all.map((r) => `${r.key.padEnd(width)}  ${r.value.padEnd(vwidth)}  (${r.source})`);
  process.stdout.write(`${lines.join('\n')}\n`);
  say(globals.quiet, `profile "${s.profile}" (${s.sources.profile}), config file ${s.configPath}`);
  return 0;
}

/** `enrich config get <key>`: the value alone on stdout (source on stderr, or both with --json). */
export function runGet(globals: GlobalOptions, key: string): number {
  const s = resolveSettings({ globals });
  sayUnknownProfile(globals, s);
  const row = rows(s).find((r) => r.key === key);
  if (!row) throw unknownKey(key);
  if (globals.json) printJson(row);
  else {
    process.stdout.write(`${row.value}\n`);
    if (globals.verbose) say(globals.quiet, `(${row.source})`);
  }
  return 0;
}

function profileOf(globals: GlobalOptions): string {
  return checkProfileName(globals.profile ?? (process.env.ENRICH_PROFILE || 'default'));
}

/** `enrich config set <key> <value>`: checks and stores one setting in the profile. */
export async function runSet(globals: GlobalOptions, key: string, value: string): Promise<number> {
  if (key === 'api_key') {
    throw usageError(
      'api_key cannot be set from the command line (it would land in your shell history)',
      {
        hint: 'run `enrich auth login`, which reads the key from a hidden prompt or stdin',
      },
    );
  }
  const spec = findSetting(key);
  if (!spec) throw unknownKey(key);
  let parsed: unknown;
  try {
    parsed = spec.parse(value);
  } catch (err) {
    throw usageError(`${key}: ${(err as Error).message.replace(/^timeout: /, '')}`);
  }
  const profile = profileOf(globals);
  const store = openConfigStore(getPaths().configDir);
  // A value that reads as the default's own (`concurrency auto`) is stored as no value.
  if (parsed === undefined) await store.unsetValue(profile, key);
  else await store.setValue(profile, key, parsed);
  if (globals.json)
    printJson({ profile, key, value: spec.format(parsed as never), config_path: store.path });
  else
    say(
      globals.quiet,
      `Set ${key} = ${spec.format(parsed as never)} in profile "${profile}" (${store.path})`,
    );
  if (process.env[spec.env]) say(globals.quiet, `note: ${spec.env} is set and takes precedence`);
  return 0;
}

/** `enrich config unset <key>`: removes one stored setting (any key present, to repair a file). */
export async function runUnset(globals: GlobalOptions, key: string): Promise<number> {
  const profile = profileOf(globals);
  const store = openConfigStore(getPaths().configDir);
  const known = findSetting(key) !== undefined || key === 'api_key';
  const removed = await store.unsetValue(profile, key);
  if (!removed && !known) throw unknownKey(key);
  if (globals.json) printJson({ profile, key, removed, config_path: store.path });
  else
    say(
      globals.quiet,
      removed
        ? `Unset ${key} in profile "${profile}" (${store.path})`
        : `${key} was not set in profile "${profile}"`,
    );
  return 0;
}
