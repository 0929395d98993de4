import type * as Lmdb from 'lmdb';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { openResultsCache } from '../../src/cache/results-cache.js';

// A failed commit as lmdb reports it: its puts rejected with "Commit failed" and the cause in
// `commitError`, a second promise rejected too (unhandled, it ended the run: a full disk did
// that before the cache kept off full disks, free-space.ts); or without `commitError` (the
// cause on the error itself, as lmdb 2 did). A pass-through wrapper of lmdb's open makes its
// puts fail so.

const control = vi.hoisted(() => ({ failPuts: false as false | 'plain' | 'commitError' }));

function failedCommit(): Promise<never> {
  if (control.failPuts === 'plain')
    return Promise.reject(new Error('MDB_MAP_FULL: Environment mapsize limit reached'));
  const commitError = Promise.reject(new Error('No space left on device'));
  return Promise.reject(Object.assign(new Error('Commit failed'), { commitError }));
}

vi.mock('lmdb', async (importOriginal) => {
  const real = await importOriginal<typeof Lmdb>();
  const never = new Promise<never>(() => undefined);
  const open = ((...args: Parameters<typeof real.open>) => {
    const db = real.open(...args);
    const put = db.put.bind(db);
    const close = db.close.bind(db);
    const flushed = db.flushed;
    let failed = false;
    db.put = ((...a: Parameters<typeof db.put>) => {
      // The table of record shapes is written in a synchronous transaction (putSync calls put):
      // only the answers' asynchronous commits fail here.
      if (!control.failPuts || typeof a[0] === 'symbol') return put(...a);
      failed = true;
      return failedCommit();
    }) as typeof db.put;
    // As lmdb's after a failed commit: its flushed and its close never settle.
    Object.defineProperty(db, 'flushed', {
      get: () => (failed ? { then: (ok: never, no: never) => never.then(ok, no) } : flushed),
      configurable: true,
    });
    db.close = (() =>
      failed ? (void close().catch(() => undefined), never) : close()) as typeof db.close;
    return db;
  }) as typeof real.open;
  return { ...real, open };
});

describe('a failed commit', () => {
  it('reported without its cause apart: one warning naming it, and the cache is off', async () => {
    const warnings: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-commit-'));
    const store = openResultsCache(dir, (w) => warnings.push(w));
    const cache = store?.scoped({ baseUrl: 'u', account: 'a', kind: 'contacts', metadata: {} });
    cache?.put('kept', { records: [{ a: 1 }], at: 1, charged: true });
    await store?.flushed();
    control.failPuts = 'plain';
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

  it('with its cause in commitError: one warning naming the cause (not lmdb\'s "Commit failed"), no unhandled rejection', async () => {
    const warnings: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-commit-'));
    const store = openResultsCache(dir, (w) => warnings.push(w));
    const cache = store?.scoped({ baseUrl: 'u', account: 'a', kind: 'contacts', metadata: {} });
    control.failPuts = 'commitError';
    for (let i = 0; i < 3; i++) cache?.put(`lost-${i}`, { records: [{ i }], at: i, charged: true });
    await store?.flushed(); // settles once warned, where lmdb's own flushed would not
    control.failPuts = false;
    expect(warnings).toEqual([
      expect.stringContaining('cannot be used (No space left on device); going on without it'),
    ]);
    expect(cache?.get('lost-0')).toBeUndefined();
    cache?.put('after', { records: [], at: 9, charged: false });
    expect(cache?.get('after')).toBeUndefined(); // off for the rest of the process
    await store?.close();
  });
});
