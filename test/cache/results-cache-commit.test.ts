import type * as Lmdb from 'lmdb';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openResultsCache } from '../../src/cache/results-cache.js';

// A failed commit as lmdb may report it without `commitError` (the cause on the error
// itself, as lmdb 2 did): a pass-through wrapper of lmdb's open makes its puts fail so.

const control = vi.hoisted(() => ({ failPuts: false }));

vi.mock('lmdb', async (importOriginal) => {
  const real = await importOriginal<typeof Lmdb>();
  const open = ((...args: Parameters<typeof real.open>) => {
    const db = real.open(...args);
    const put = db.put.bind(db);
    db.put = ((...a: Parameters<typeof db.put>) =>
      control.failPuts
        ? Promise.reject(new Error('MDB_MAP_FULL: Environment mapsize limit reached'))
        : put(...a)) as typeof db.put;
    return db;
  }) as typeof real.open;
  return { ...real, open };
});

describe('a failed commit reported without its cause apart', () => {
  it('is one warning naming it, and the cache is off', async () => {
    const warnings: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-commit-'));
    const store = openResultsCache(dir, (w) => warnings.push(w));
    const cache = store?.scoped({ baseUrl: 'u', account: 'a', kind: 'contacts', metadata: {} });
    cache?.put('kept', { records: [{ a: 1 }], at: 1, charged: true });
    await store?.flushed();
    control.failPuts = true;
    cache?.put('lost', { records: [{ a: 2 }], at: 2, charged: true });
    await store?.flushed();
    control.failPuts = false;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'cannot be used (MDB_MAP_FULL: Environment mapsize limit reached)',
    );
    expect(cache?.get('kept')).toBeUndefined();
    await store?.close();
  });
});
