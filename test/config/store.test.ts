import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openConfigStore } from '../../src/config/store.js';

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

  it('rejects bad profile names and a damaged file with CONFIG_INVALID', async () => {
    const dir = tempDir();
    const store = openConfigStore(dir);
    expect(() => store.readProfile('../x')).toThrow(/profile: expected letters/);
    writeFileSync(store.path, '{not json', { mode: 0o600 });
    expect(() => openConfigStore(dir).readProfile('default')).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });
});
