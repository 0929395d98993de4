import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { tempDir } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

type Listed = { profile: string; settings: Record<string, { value: string; source: string }> };
const list = async (args: string[], env: Record<string, string>) => {
  const r = await runCli(['config', 'list', '--json', ...args], { env });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Listed;
};

describe('enrich config', () => {
  it('lists every setting with its default source', async () => {
    const env = await tempEnv();
    const r = await runCli(['config', 'list'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^batch_size\s+1000\s+\(default\)$/m);
    expect(r.stdout).toMatch(/^timeout\s+2h 00m\s+\(default\)$/m);
    expect(r.stdout).toMatch(/^api_key\s+\(default\)$/m);
    for (const key of ['base_url', 'concurrency', 'formula_escape', 'prefix']) {
      expect(r.stdout).toMatch(new RegExp(`^${key}\\s`, 'm'));
    }
  });

  it('applies flag > env > profile > default, each shown with its source', async () => {
    const env = await tempEnv();
    expect(
      (await runCli(['config', 'set', 'base_url', 'https://file.example/'], { env })).code,
    ).toBe(0);
    expect((await runCli(['config', 'set', 'batch_size', '500'], { env })).code).toBe(0);
    expect(statSync(`${env.ENRICH_CONFIG_DIR}/config.json`).mode & 0o777).toBe(0o600);

    let l = await list([], env);
    expect(l.settings.base_url).toEqual({ value: 'https://file.example', source: 'file' });
    expect(l.settings.batch_size).toEqual({ value: '500', source: 'file' });
    expect(l.settings.concurrency).toEqual({ value: 'auto', source: 'default' });

    const withEnv = { ...env, ENRICH_BASE_URL: 'https://env.example', ENRICH_BATCH_SIZE: '250' };
    l = await list([], withEnv);
    expect(l.settings.base_url).toEqual({ value: 'https://env.example', source: 'env' });
    expect(l.settings.batch_size).toEqual({ value: '250', source: 'env' });

    l = await list(['--base-url', 'https://flag.example'], withEnv);
    expect(l.settings.base_url).toEqual({ value: 'https://flag.example', source: 'flag' });

    const get = await runCli(['config', 'get', 'batch_size'], { env: withEnv });
    expect(get.stdout).toBe('250\n');

    expect((await runCli(['config', 'unset', 'batch_size'], { env })).code).toBe(0);
    l = await list([], env);
    expect(l.settings.batch_size).toEqual({ value: '1000', source: 'default' });
  });

  it('keeps profiles apart (--profile, then ENRICH_PROFILE)', async () => {
    const env = await tempEnv();
    await runCli(['config', 'set', 'concurrency', '8', '--profile', 'staging'], { env });
    expect((await list([], env)).settings.concurrency?.value).toBe('auto');
    const viaFlag = await list(['--profile', 'staging'], env);
    expect(viaFlag.profile).toBe('staging');
    expect(viaFlag.settings.concurrency).toEqual({ value: '8', source: 'file' });
    const viaEnv = await list([], { ...env, ENRICH_PROFILE: 'staging' });
    expect(viaEnv.settings.concurrency?.value).toBe('8');
    // `auto`, the default's own name, is taken (regression: refused as not an integer).
    const auto = await runCli(['config', 'set', 'concurrency', 'auto', '--profile', 'staging'], {
      env,
    });
    expect([auto.code, auto.stderr]).toEqual([
      0,
      expect.stringMatching(/Set concurrency = auto in profile "staging"/),
    ]);
    expect((await list(['--profile', 'staging'], env)).settings.concurrency).toEqual({
      value: 'auto',
      source: 'default',
    });
    const viaAutoEnv = await list([], { ...env, ENRICH_CONCURRENCY: 'auto' });
    expect(viaAutoEnv.settings.concurrency?.value).toBe('auto');
  });

  it('a mistyped profile is said so: config list shows what it would have, a command asks for its key naming the profiles there are', async () => {
    const env = await tempEnv();
    expect(
      (await runCli(['config', 'set', 'timeout', '5m', '--profile', 'staging'], { env })).code,
    ).toBe(0);
    const l = await runCli(['config', 'list', '--profile', 'stagign'], { env });
    expect(l.code).toBe(0);
    expect(l.stdout).toMatch(/^timeout\s+2h 00m\s+\(default\)$/m);
    expect(l.stderr).toContain('enrich: no profile "stagign" in ');
    expect(l.stderr).toContain('(its profiles: staging): what is shown is what it would have');
    const c = await runCli(['contact', '--email', 'a@b.com', '--profile', 'stagign'], {
      env: { ...env, ENRICH_API_KEY: '' },
    });
    expect(c.code).toBe(4);
    expect(c.stderr).toMatch(
      /no API key for profile "stagign": no profile "stagign" in .* \(its profiles: staging\) \[AUTH_MISSING\]/,
    );
    expect(c.stderr).toContain(
      "hint: check the profile's name, or save a key under it with `enrich auth login --profile stagign`",
    );
  });

  it('auth status of a mistyped profile says there is no such profile, naming those there are (regression: just "no key")', async () => {
    const env = await tempEnv();
    expect(
      (await runCli(['config', 'set', 'timeout', '5m', '--profile', 'staging'], { env })).code,
    ).toBe(0);
    const s = await runCli(['auth', 'status', '--profile', 'stagign', '--json'], {
      env: { ...env, ENRICH_API_KEY: '' },
    });
    expect(s.code).toBe(4);
    expect(JSON.parse(s.stdout).check).toMatch(
      /^no key: no profile "stagign" in .*config\.json \(its profiles: staging\)$/,
    );
    expect(s.stderr).toContain(
      "hint: check the profile's name, or save a key under it with `enrich auth login --profile stagign`",
    );
    const known = await runCli(['auth', 'status', '--profile', 'staging', '--json'], {
      env: { ...env, ENRICH_API_KEY: '' },
    });
    expect(known.code).toBe(4);
    expect(JSON.parse(known.stdout).check).toBe('no key');
  });

  it('refuses unknown keys, bad values and a key on the command line (exit 2)', async () => {
    const env = await tempEnv();
    const cases: [string[], RegExp][] = [
      [
        ['config', 'set', 'colour', 'red'],
        /unknown setting "colour" \(expected one of: base_url, batch_size/,
      ],
      [['config', 'get', 'colour'], /unknown setting "colour"/],
      [
        ['config', 'set', 'batch_size', 'lots'],
        /batch_size: expected an integer from 1 to 10000, got "lots"/,
      ],
      [['config', 'set', 'timeout', 'soon'], /timeout: expected a duration such as 500ms/],
      [
        ['config', 'set', 'base_url', 'ftp://x'],
        /base_url: expected an http:\/\/ or https:\/\/ URL/,
      ],
      [
        ['config', 'set', 'api_key', 'sk_secret_123456789'],
        /api_key cannot be set from the command line/,
      ],
      [['config', 'list', '--profile', '../etc'], /profile: expected letters/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const bad = await runCli(['config', 'list'], { env: { ...env, ENRICH_CONCURRENCY: '0' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /ENRICH_CONCURRENCY: expected an integer from 1 to 64, got "0" \[CONFIG_INVALID\]/,
    );
  });

  it('refuses a blank prefix, by config set and by --prefix, exit 2, keeping the one set (regression: stored, and columns written with bare names)', async () => {
    const env = await tempEnv();
    const blank =
      /prefix: expected a prefix such as enriched_, got "( *)": without one the enriched columns would have bare names/;
    for (const value of ['', '   ']) {
      const r = await runCli(['config', 'set', 'prefix', value], { env });
      expect(r.code, JSON.stringify(value)).toBe(2);
      expect(r.stderr).toMatch(blank);
      expect(r.stderr).toMatch(/^enrich: prefix: /);
    }
    expect((await runCli(['config', 'get', 'prefix'], { env })).stdout).toBe('enriched_\n');
    expect((await runCli(['config', 'set', 'prefix', 'x_'], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'prefix', ' '], { env })).code).toBe(2);
    expect((await runCli(['config', 'get', 'prefix'], { env })).stdout).toBe('x_\n');

    const input = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
    const out = join(await tempDir(), 'out.csv');
    for (const [kind, value] of [
      ['contacts', ''],
      ['companies', ' '],
    ] as const) {
      const r = await runCli([kind, input, '--sandbox', '--prefix', value, '-o', out], { env });
      expect(r.code, kind).toBe(2);
      expect(r.stderr).toMatch(/^enrich: --prefix: expected a prefix such as enriched_/);
      expect(existsSync(out)).toBe(false);
    }
  });
});
