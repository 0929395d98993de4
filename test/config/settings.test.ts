import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GlobalOptions } from '../../src/cli/globals.js';
import { resolveSettings, unknownProfileText } from '../../src/config/settings.js';
import { openConfigStore } from '../../src/config/store.js';

const globals = (over: Partial<GlobalOptions> = {}): GlobalOptions => ({
  sandbox: false,
  json: false,
  quiet: false,
  verbose: false,
  debug: false,
  color: false,
  progress: false,
  input: false,
  ...over,
});

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'enrich-settings-'));
  const env = { ENRICH_CONFIG_DIR: join(root, 'cfg'), ENRICH_STATE_DIR: join(root, 'state') };
  return { env, store: openConfigStore(env.ENRICH_CONFIG_DIR) };
}

describe('a profile name that is no name', () => {
  it('is refused naming what chose it: ENRICH_PROFILE or --profile', () => {
    const { env } = setup();
    expect(() =>
      resolveSettings({ globals: globals(), env: { ...env, ENRICH_PROFILE: 'bad/name' } }),
    ).toThrow(/^ENRICH_PROFILE: expected letters, digits.*got "bad\/name"$/);
    expect(() => resolveSettings({ globals: globals({ profile: '../etc' }), env })).toThrow(
      /^--profile: expected letters, digits.*got "\.\.\/etc"$/,
    );
  });
});

describe('a profile chosen that the config file does not have (a typo)', () => {
  it('is named with the profiles it has, by flag or ENRICH_PROFILE; the default profile and a stored one are not', async () => {
    const { env, store } = setup();
    await store.setValue('staging', 'timeout', '5m');
    await store.setValue('prod', 'batch_size', 500);
    const typo = resolveSettings({ globals: globals({ profile: 'stagign' }), env });
    expect(typo.unknownProfile).toEqual(['prod', 'staging']);
    expect(typo.timeoutMs).toBe(7_200_000);
    expect(unknownProfileText(typo)).toBe(
      `no profile "stagign" in ${join(env.ENRICH_CONFIG_DIR, 'config.json')} (its profiles: prod, staging)`,
    );
    const byEnv = resolveSettings({ globals: globals(), env: { ...env, ENRICH_PROFILE: 'prdo' } });
    expect(byEnv.unknownProfile).toEqual(['prod', 'staging']);
    for (const s of [
      resolveSettings({ globals: globals(), env }),
      resolveSettings({ globals: globals({ profile: 'staging' }), env }),
    ]) {
      expect(s.unknownProfile).toBeUndefined();
      expect(unknownProfileText(s)).toBeUndefined();
    }
    const { env: empty } = setup();
    const none = resolveSettings({ globals: globals({ profile: 'x' }), env: empty });
    expect(unknownProfileText(none)).toMatch(/\(its profiles: none\)$/);
  });
});

describe('resolveSettings', () => {
  it('gives the defaults with their source when nothing is set', async () => {
    const { env } = setup();
    const s = resolveSettings({ globals: globals(), env });
    expect(s).toMatchObject({
      profile: 'default',
      baseUrl: undefined,
      apiKey: undefined,
      apiKeySource: 'none',
      batchSize: 1000,
      concurrency: undefined,
      timeoutMs: 7_200_000,
      formulaEscape: 'auto',
      prefix: 'enriched_',
    });
    expect(s.sources.batchSize).toBe('default');
    expect(s.configPath).toBe(join(env.ENRICH_CONFIG_DIR, 'config.json'));
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('applies flags > env > profile > defaults', async () => {
    const { env, store } = setup();
    await store.setValue('default', 'batch_size', 100);
    await store.setValue('default', 'concurrency', 2);
    await store.setValue('default', 'timeout', 60_000);
    await store.setValue('default', 'base_url', 'https://file.example');
    const s = resolveSettings({
      globals: globals({ baseUrl: 'https://flag.example/' }),
      env: { ...env, ENRICH_BATCH_SIZE: '200', ENRICH_CONCURRENCY: '8' },
      flags: { concurrency: 16 },
    });
    expect(s.baseUrl).toBe('https://flag.example');
    expect(s.batchSize).toBe(200);
    expect(s.concurrency).toBe(16);
    expect(s.timeoutMs).toBe(60_000);
    expect(s.sources).toMatchObject({
      baseUrl: 'flag',
      batchSize: 'env',
      concurrency: 'flag',
      timeoutMs: 'file',
      prefix: 'default',
    });
  });

  it('reads rate_limit per profile, from ENRICH_RATE_LIMIT and from the --rate-limit flag', async () => {
    const { env, store } = setup();
    expect(resolveSettings({ globals: globals(), env }).rateLimit).toBeUndefined();
    await store.setValue('slow', 'rate_limit', 0.5);
    const fromFile = resolveSettings({ globals: globals({ profile: 'slow' }), env });
    expect(fromFile).toMatchObject({ rateLimit: 0.5, sources: { rateLimit: 'file' } });
    expect(resolveSettings({ globals: globals(), env }).rateLimit).toBeUndefined();
    const fromEnv = resolveSettings({
      globals: globals(),
      env: { ...env, ENRICH_RATE_LIMIT: '3' },
    });
    expect(fromEnv.rateLimit).toBe(3);
    const fromFlag = resolveSettings({ globals: globals(), env, flags: { rateLimit: 8 } });
    expect(fromFlag).toMatchObject({ rateLimit: 8, sources: { rateLimit: 'flag' } });
    expect(() => resolveSettings({ globals: globals(), env, flags: { rateLimit: 0 } })).toThrow(
      /--rate-limit: expected requests per second/,
    );
  });

  it('takes the key from ENRICH_API_KEY before the profile', async () => {
    const { env, store } = setup();
    await store.setValue('default', 'api_key', 'sk_file_000000000000');
    expect(resolveSettings({ globals: globals(), env })).toMatchObject({
      apiKey: 'sk_file_000000000000',
      apiKeySource: 'file',
    });
    const s = resolveSettings({
      globals: globals(),
      env: { ...env, ENRICH_API_KEY: 'sk_env_1111111111' },
    });
    expect(s).toMatchObject({ apiKey: 'sk_env_1111111111', apiKeySource: 'env' });
  });

  it('selects the profile by --profile, then ENRICH_PROFILE', async () => {
    const { env, store } = setup();
    await store.setValue('staging', 'batch_size', 7);
    await store.setValue('ci', 'batch_size', 9);
    const viaEnv = resolveSettings({ globals: globals(), env: { ...env, ENRICH_PROFILE: 'ci' } });
    expect(viaEnv).toMatchObject({ profile: 'ci', batchSize: 9 });
    expect(viaEnv.sources.profile).toBe('env');
    const viaFlag = resolveSettings({
      globals: globals({ profile: 'staging' }),
      env: { ...env, ENRICH_PROFILE: 'ci' },
    });
    expect(viaFlag).toMatchObject({ profile: 'staging', batchSize: 7 });
  });

  it('refuses unknown keys and bad values, naming where they came from', async () => {
    const { env, store } = setup();
    expect(() =>
      resolveSettings({ globals: globals(), env, flags: { colour: 1 } as never }),
    ).toThrow(/unknown setting "colour"/);
    expect(() => resolveSettings({ globals: globals(), env, flags: { batchSize: 0 } })).toThrow(
      /--batch-size: expected an integer from 1 to 10000/,
    );
    expect(() =>
      resolveSettings({ globals: globals(), env: { ...env, ENRICH_FORMULA_ESCAPE: 'maybe' } }),
    ).toThrow(/ENRICH_FORMULA_ESCAPE: expected one of auto, always, never/);
    await store.setValue('default', 'colour', 'red');
    expect(() => resolveSettings({ globals: globals(), env })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringMatching(/unknown setting "colour"/),
      }),
    );
    await store.unsetValue('default', 'colour');
    await store.setValue('default', 'base_url', 'ftp://x');
    expect(() => resolveSettings({ globals: globals(), env })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', exitCode: 2 }),
    );
  });

  it('refuses a blank prefix from a flag, a variable or the file, naming where it came from', async () => {
    const { env, store } = setup();
    const blank = 'expected a prefix such as enriched_, got';
    expect(() => resolveSettings({ globals: globals(), env, flags: { prefix: '' } })).toThrow(
      expect.objectContaining({
        code: 'USAGE',
        message: expect.stringContaining(`--prefix: ${blank} ""`),
      }),
    );
    expect(() =>
      resolveSettings({ globals: globals(), env: { ...env, ENRICH_PREFIX: ' \t' } }),
    ).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining(`ENRICH_PREFIX: ${blank} " \\t"`),
      }),
    );
    await store.setValue('default', 'prefix', '');
    expect(() => resolveSettings({ globals: globals(), env })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        exitCode: 2,
        message: expect.stringContaining(`config file: prefix: ${blank} ""`),
      }),
    );
    // A flag's prefix wins over the file's blank one, which is then never read.
    expect(resolveSettings({ globals: globals(), env, flags: { prefix: 'x_' } }).prefix).toBe('x_');
  });

  it('names a bad duration by where it was read, once, whether flag, variable or file', async () => {
    const { env, store } = setup();
    const threw = (f: () => unknown): string => {
      try {
        f();
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    };
    const bad = 'expected a duration such as 500ms, 30s, 5m, 2h or 7d, got "abc"';
    expect(
      threw(() =>
        resolveSettings({ globals: globals(), env, flags: { cacheMaxAgeMs: 'abc' as never } }),
      ),
    ).toBe(`--max-age: ${bad}`);
    const envBad = { ...env, ENRICH_CACHE_MAX_AGE: 'abc', ENRICH_TIMEOUT: '2h' };
    expect(threw(() => resolveSettings({ globals: globals(), env: envBad }))).toBe(
      `ENRICH_CACHE_MAX_AGE: ${bad}`,
    );
    await store.setValue('default', 'run_retention', 'abc');
    expect(threw(() => resolveSettings({ globals: globals(), env }))).toBe(
      `config file: run_retention: ${bad}`,
    );
  });
});
