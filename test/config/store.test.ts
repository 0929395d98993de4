import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openConfigStore } from '../../src/config/store.js';
import { EnrichError } from '../../src/errors.js';

const mode = (p: string) => statSync(p).mode & 0o777;
const tempDir = () => join(mkdtempSync(join(tmpdir(), 'enrich-store-')), 'cfg');

describe('openConfigStore', () => {
  it('creates the directory 0700 and the file 0600, and writes nothing until asked', async () => {
    const dir = tempDir();
    const store = openConfigStore(dir);
    expect(mode(dir)).toBe(0o700);
    expect(store.readProfile('default')).toBeUndefined();
    expect(existsSync(store.path)).toBe(false);
    await store.setValue('default', 'api_key', 'sk_test_1234567890');
    expect(mode(store.path)).toBe(0o600);
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      profiles: { default: { api_key: 'sk_test_1234567890' } },
    });
  });

  it('repairs loose modes on open', async () => {
    const dir = tempDir();
    const store = openConfigStore(dir);
    await store.setValue('default', 'batch_size', 10);
    chmodSync(dir, 0o755);
    chmodSync(store.path, 0o644);
    const again = openConfigStore(dir);
    expect(again.repairs).toHaveLength(2);
    expect(mode(dir)).toBe(0o700);
    expect(mode(store.path)).toBe(0o600);
  });

  it('keeps profiles apart and unsets values', async () => {
    const store = openConfigStore(tempDir());
    await store.setValue('default', 'batch_size', 10);
    await store.setValue('ci.eu', 'batch_size', 20);
    expect(store.readProfile('ci.eu')).toEqual({ batch_size: 20 });
    expect(await store.unsetValue('default', 'batch_size')).toBe(true);
    expect(await store.unsetValue('default', 'batch_size')).toBe(false);
    expect(store.readProfile('default')).toEqual({});
  });

  it('a profile named like an Object.prototype member (constructor, valueOf) is a profile like any other', async () => {
    const store = openConfigStore(tempDir());
    await store.setValue('default', 'batch_size', 10);
    for (const name of ['constructor', 'valueOf', 'toString', 'hasOwnProperty'])
      expect(store.readProfile(name)).toBeUndefined();
    expect(await store.unsetValue('valueOf', 'batch_size')).toBe(false);
    await store.setValue('valueOf', 'batch_size', 20);
    expect(store.readProfile('valueOf')).toEqual({ batch_size: 20 });
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      profiles: { default: { batch_size: 10 }, valueOf: { batch_size: 20 } },
    });
  });

  it('rejects bad profile names and a damaged file with CONFIG_INVALID', async () => {
    const dir = tempDir();
    const store = openConfigStore(dir);
    expect(() => store.readProfile('../x')).toThrow(/profile: expected letters/);
    writeFileSync(store.path, '{not json', { mode: 0o600 });
    expect(() => openConfigStore(dir).readProfile('default')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });

  it.each(['[]', 'null', '3', '"profiles"', '[{"profiles":{"default":{}}}]'])(
    'a file that is JSON but no object (%s) is refused, never read as "no profiles"',
    (text) => {
      const dir = tempDir();
      const store = openConfigStore(dir);
      writeFileSync(store.path, text, { mode: 0o600 });
      expect(() => store.readProfile('default')).toThrow(
        expect.objectContaining({
          code: 'CONFIG_INVALID',
          message: 'config file: expected a JSON object ({"profiles": {…}})',
          location: { file: store.path },
        }),
      );
      expect(() => store.profileNames()).toThrow(/expected a JSON object/);
    },
  );

  describe('a damaged file never shows its content', () => {
    const secret = 'sk_live_SECRET123abcdef';
    // Every 6-character piece of the key: none may reach the message, hint or cause.
    const pieces = Array.from({ length: secret.length - 5 }, (_, i) => secret.slice(i, i + 6));
    const failure = (text: string) => {
      const dir = tempDir();
      const store = openConfigStore(dir);
      writeFileSync(store.path, text, { mode: 0o600 });
      try {
        store.readProfile('default');
      } catch (err) {
        return { err: err as EnrichError, path: store.path };
      }
      throw new Error('expected readProfile to throw');
    };
    const cases: [string, string, RegExp][] = [
      [
        'an unquoted key',
        `{"profiles":{"default":{"api_key":${secret}}}}`,
        /not valid JSON( at line 1, column 35)?$/,
      ],
      [
        'a missing comma after the key, on line 3',
        `{"profiles": {\n  "default": {\n    "api_key": "${secret}" "base_url": "x"}}}`,
        /not valid JSON at line 3, column 42$/,
      ],
      [
        'a key cut short',
        `{"profiles":{"default":{"api_key":"${secret}`,
        /not valid JSON at line 1, column 59$/,
      ],
      [
        'a BOM before the key',
        `\ufeff{"profiles":{"default":{"api_key":"${secret}"}}}`,
        /not valid JSON/,
      ],
    ];
    it.each(cases)('%s', (_name, text, message) => {
      const { err, path } = failure(text);
      expect(err).toBeInstanceOf(EnrichError);
      expect(err.code).toBe('CONFIG_INVALID');
      expect(err.exitCode).toBe(2);
      expect(err.location).toEqual({ file: path });
      const shown = [err.message, err.hint ?? '', err.stack ?? '', String(err.cause ?? '')].join(
        '\n',
      );
      for (const piece of pieces) expect(shown).not.toContain(piece);
      expect(err.message).toMatch(message);
    });
  });
});
