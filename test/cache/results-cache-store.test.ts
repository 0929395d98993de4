import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CACHE_FILE,
  cacheDirError,
  cacheError,
  clearCache,
  describeUnusable,
  openResultsCache,
  type CacheScope,
  type ResultsCacheStore,
} from '../../src/cache/results-cache.js';
import type { ResultsCache } from '../../src/pipeline/types.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';

// The results cache store in process (issue 21: mutants of results-cache.ts that only whole
// runs exercised): what a later get, stats and prune return, how it degrades, and how its
// writes are paced.

const SCOPE: CacheScope = {
  baseUrl: 'http://127.0.0.1:4010',
  account: 'acct',
  kind: 'contacts',
  metadata: { mobile: false },
};

const open: ResultsCacheStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const tempDir = () => mkdtemp(join(tmpdir(), 'enrich-cache-store-'));

async function opened(dir?: string) {
  const warnings: string[] = [];
  const store = openResultsCache(dir ?? (await tempDir()), (w) => warnings.push(w));
  if (!store) throw new Error(`the cache did not open: ${warnings.join('; ')}`);
  open.push(store);
  return { store, cache: store.scoped(SCOPE) as ResultsCache, warnings };
}

const answer = (at: number, charged = true, email = `p${at}@x.co`) => ({
  records: [{ email }],
  at,
  charged,
});

/** The promise's state once the microtasks queued now have run (no event-loop turn: no I/O lands). */
async function stateNow(p: Promise<unknown> | undefined): Promise<'pending' | 'settled'> {
  expect(p).toBeInstanceOf(Promise);
  let settled = false;
  void p?.then(
    () => void (settled = true),
    () => void (settled = true),
  );
  for (let i = 0; i < 20; i++) await null;
  return settled ? 'settled' : 'pending';
}

describe('stats', () => {
  it('counts the entries and the charged ones, and gives the oldest and newest answer times', async () => {
    const { store, cache } = await opened();
    expect(store.stats()).toEqual({ entries: 0, charged: 0, oldest: null, newest: null });
    cache.put('a', answer(5_000, true));
    cache.put('b', answer(1_000, false));
    cache.put('c', answer(9_000, true));
    cache.put('d', answer(3_000, false));
    await store.flushed();
    expect(store.stats()).toEqual({ entries: 4, charged: 2, oldest: 1_000, newest: 9_000 });
  });
});

describe('prune', () => {
  it('removes the answers older than the cutoff only (one at the cutoff stays) and says how many', async () => {
    const { store, cache } = await opened();
    cache.put('old', answer(1_000));
    cache.put('older', answer(500));
    cache.put('edge', answer(5_000));
    cache.put('new', answer(9_000));
    await store.flushed();
    expect(await store.prune(5_000)).toBe(2);
    expect([cache.get('old'), cache.get('older')]).toEqual([undefined, undefined]);
    expect(cache.get('edge')?.at).toBe(5_000);
    expect(cache.get('new')?.at).toBe(9_000);
    expect(store.stats()).toMatchObject({ entries: 2, oldest: 5_000 });
    expect(await store.prune(0)).toBe(0);
  });
});

describe('prune of many', () => {
  it('removes every old answer of a large cache (several transactions) and keeps every newer one', async () => {
    const { store, cache } = await opened();
    for (let i = 0; i < 25_000; i++) cache.put(`r${i}`, answer(i < 20_000 ? 1 : 9));
    await store.flushed();
    expect(await store.prune(5)).toBe(20_000);
    expect(store.stats()).toMatchObject({ entries: 5_000, oldest: 9 });
    expect(cache.get('r19999')).toBeUndefined();
    expect(cache.get('r20000')?.at).toBe(9);
  });
});

describe('scopes', () => {
  it("keeps each account's answers to itself: another key's account never sees them", async () => {
    const { store, cache } = await opened();
    cache.put('req-1', answer(1));
    await store.flushed();
    expect(store.scoped({ ...SCOPE, account: 'other' }).get('req-1')).toBeUndefined();
    expect(store.scoped({ ...SCOPE, kind: 'companies' }).get('req-1')).toBeUndefined();
    expect(store.scoped({ ...SCOPE }).get('req-1')?.records).toEqual([{ email: 'p1@x.co' }]);
  });
});

describe('a cache that fails while in use', () => {
  it('warns once, then is off for the rest of the process: no answer served, nothing kept, nothing thrown', async () => {
    const { store, cache, warnings } = await opened();
    cache.put('kept', answer(1));
    await store.flushed();
    // An answer lmdb cannot encode fails its put.
    cache.put('bad', { records: [{ email: Symbol('x') }], at: 2, charged: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^the results cache in .* cannot be used \(.*symbol.*\); going on without it: every row is sent/,
    );
    cache.put('bad again', { records: [{ email: Symbol('y') }], at: 3, charged: true });
    expect(cache.get('kept')).toBeUndefined();
    cache.put('later', answer(4));
    expect(store.stats()).toEqual({ entries: 0, charged: 0, oldest: null, newest: null });
    expect(await store.prune(Number.MAX_SAFE_INTEGER)).toBe(0);
    await store.flushed();
    expect(warnings).toHaveLength(1);
  });
});

describe('flushed and settled', () => {
  it('flushed waits for the puts made so far to be written', async () => {
    const { store, cache } = await opened();
    cache.put('a', answer(1));
    const flushed = store.flushed();
    expect(await stateNow(flushed)).toBe('pending');
    await flushed;
    expect(await stateNow(store.flushed())).toBe('settled');
  });

  it('settled waits only once more than 2,000 puts wait to be written, and not after they are', async () => {
    const { store, cache } = await opened();
    for (let i = 0; i < 2000; i++) cache.put(`a${i}`, answer(i));
    expect(await stateNow(cache.settled?.())).toBe('settled');
    cache.put('a2000', answer(2000));
    const waiting = cache.settled?.();
    expect(await stateNow(waiting)).toBe('pending');
    await waiting;
    expect(await stateNow(cache.settled?.())).toBe('settled');
    // Written puts no longer count: ten more are no reason to wait.
    for (let i = 0; i < 10; i++) cache.put(`b${i}`, answer(i));
    expect(await stateNow(cache.settled?.())).toBe('settled');
    await store.flushed();
    // ...and a second pile of more than 2,000 is waited for again.
    for (let i = 0; i < 2001; i++) cache.put(`c${i}`, answer(i));
    const again = cache.settled?.();
    expect(await stateNow(again)).toBe('pending');
    await again;
    expect(cache.get('c2000')?.at).toBe(2000);
    expect(store.stats().entries).toBe(2001 + 10 + 2001);
  });
});

describe('close', () => {
  it('writes what was put, then closes: a closed cache serves nothing (and throws nothing)', async () => {
    const { store, cache } = await opened();
    cache.put('a', answer(1));
    await store.close();
    open.length = 0;
    expect(cache.get('a')).toBeUndefined();
    const again = openResultsCache(store.dir);
    expect(again?.scoped(SCOPE).get('a')?.at).toBe(1);
    await again?.close();
  });
});

describe('a cache that cannot be opened', () => {
  it('where the directory should be there is a file: undefined and one warning naming it', async () => {
    const dir = join(await tempDir(), 'cache');
    await writeFile(dir, 'not a directory');
    const warnings: string[] = [];
    expect(openResultsCache(dir, (w) => warnings.push(w))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`the results cache in ${dir} cannot be used (`);
    // The hint fixes it (regression: "enrich cache clear starts a new one", which crashed).
    expect(warnings[0]).toContain(`${dir} is not a directory`);
    expect(warnings[0]).toContain('set ENRICH_CACHE_DIR to a directory');
    expect(warnings[0]).not.toContain('enrich cache clear');
  });

  it('a damaged file: undefined and one warning, never a crash', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, CACHE_FILE), Buffer.alloc(8192, 0x5a));
    const warnings: string[] = [];
    expect(openResultsCache(dir, (w) => warnings.push(w))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('is damaged (not an LMDB file)');
  });

  rootTest('(root: a tmpfs) on a read-only file system: undefined and one warning', async () => {
    await withTmpfs('ro,size=1m', async (ro) => {
      const warnings: string[] = [];
      expect(openResultsCache(join(ro, 'cache'), (w) => warnings.push(w))).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('cannot be used');
    });
  });
});

describe.skipIf(process.platform === 'win32')("the cache's modes", () => {
  it('a directory holding more than the cache is left as it is; the files are private all the same', async () => {
    // Not ours to lock down: ENRICH_CACHE_DIR may name a home or project directory (or /tmp).
    const { chmod, mkdir, stat } = await import('node:fs/promises');
    const dir = await tempDir();
    await mkdir(join(dir, 'notes'));
    await chmod(dir, 0o755);
    const { cache, store, warnings } = await opened(dir);
    cache.put('k', answer(1));
    await store.flushed();
    const mode = async (p: string) => (await stat(p)).mode & 0o777;
    expect(await mode(dir)).toBe(0o755);
    expect(await mode(join(dir, CACHE_FILE))).toBe(0o600);
    expect(await mode(join(dir, `${CACHE_FILE}-lock`))).toBe(0o600);
    expect([store.repairs, warnings]).toEqual([[], []]);
  });
});

describe('clearCache', () => {
  it("removes the cache's files, current and earlier formats, and nothing else", async () => {
    const { store, cache } = await opened();
    cache.put('a', answer(1));
    await store.close();
    open.length = 0;
    await writeFile(join(store.dir, 'results.mdb'), 'legacy');
    await writeFile(join(store.dir, 'notes.txt'), 'mine');
    await clearCache(store.dir);
    expect(await readdir(store.dir)).toEqual(['notes.txt']);
    await rm(store.dir, { recursive: true, force: true });
  });
});

describe('marks of requests sent without an answer', () => {
  it('a mark alone, and one over an older answer that keeps it; by claim key where nothing, an older answer or an older mark is', async () => {
    const { store, cache } = await opened();
    cache.put('lost', { records: [], at: 500, charged: false, unconfirmed: true });
    cache.put('old', answer(100));
    cache.put('newer', answer(900));
    cache.put('at', answer(300));
    cache.put('over', { ...answer(100), unansweredAt: 700 });
    await store.flushed();
    expect(cache.get('lost')).toEqual({ records: [], at: 500, charged: false, unconfirmed: true });
    expect(cache.get('over')).toEqual({ ...answer(100), unansweredAt: 700 });

    const mark = (k: string, at: number) => cache.markStored!(cache.claimKey!(k), at);
    mark('old', 600);
    mark('newer', 600); // the answer came after the request: kept as it is
    mark('at', 300); // an answer of the request's own time: kept as it is too
    mark('lost', 400); // marked since: the later mark stays
    mark('over', 650); // likewise over an answer
    mark('none', 600);
    await store.flushed();
    expect(cache.get('old')).toEqual({ ...answer(100), unansweredAt: 600 });
    expect(cache.get('newer')).toEqual(answer(900));
    expect(cache.get('at')).toEqual(answer(300));
    expect(cache.get('lost')).toMatchObject({ at: 500, unconfirmed: true });
    expect(cache.get('over')).toEqual({ ...answer(100), unansweredAt: 700 });
    // A loss after the mark moves it on: it lasts a max age from the last one.
    mark('lost', 550);
    mark('over', 750);
    await store.flushed();
    expect(cache.get('lost')).toMatchObject({ at: 550, unconfirmed: true });
    expect(cache.get('over')).toEqual({ ...answer(100), unansweredAt: 750 });
    expect(cache.get('none')).toEqual({ records: [], at: 600, charged: false, unconfirmed: true });
    // An answer put again over its mark (sent again and answered) is an answer alone.
    cache.put('old', answer(1_000));
    await store.flushed();
    expect(cache.get('old')).toEqual(answer(1_000));
    // Marks alone are no answers charged for: 'old' (put again), 'newer', 'at' and 'over' are.
    expect(store.stats()).toMatchObject({ entries: 6, charged: 4 });
    // A marked entry's age is its mark's: a prune of what is older than 650 removes the two
    // marks of 550 and 600 and the answer of 300, and keeps the answer of 100 under its mark of 750.
    expect(await store.prune(650)).toBe(3);
    expect(store.stats()).toMatchObject({ entries: 3, oldest: 750, newest: 1_000 });
    expect(cache.get('over')).toEqual({ ...answer(100), unansweredAt: 750 });
  });
});

describe('why a cache cannot be used, and its fix', () => {
  const coded = (code: string, message = `${code}: failed`) =>
    Object.assign(new Error(message), { code });
  const dir = '/data/cache';
  const file = join(dir, CACHE_FILE);

  it('by errno: not a directory, a directory at the file, not ours to write; anything else is fixed by starting anew', () => {
    for (const code of ['ENOTDIR', 'EEXIST'])
      expect(describeUnusable(dir, coded(code))).toEqual({
        why: `${dir} is not a directory`,
        hint: `set ENRICH_CACHE_DIR to a directory, or move what is at ${dir}`,
      });
    for (const code of ['EISDIR', 'ERR_FS_EISDIR'])
      expect(describeUnusable(dir, coded(code))).toEqual({
        why: `${file} is a directory, not the cache's file`,
        hint: `move or remove ${file} (enrich makes the file there), or set ENRICH_CACHE_DIR to another directory`,
      });
    for (const code of ['EACCES', 'EPERM', 'EROFS'])
      expect(describeUnusable(dir, coded(code, `${code}: no`))).toEqual({
        why: `${code}: no`,
        hint: 'run as the user the directory belongs to, or set ENRICH_CACHE_DIR to a directory of your own',
      });
    expect(describeUnusable(dir, coded('EIO', 'EIO: bad block'))).toEqual({
      why: 'EIO: bad block',
      hint: 'enrich cache clear starts a new one',
    });
    expect(describeUnusable(dir, undefined)).toEqual({
      why: 'undefined',
      hint: 'enrich cache clear starts a new one',
    });
    expect(describeUnusable(dir, 'MDB_CORRUPTED')).toEqual({
      why: 'MDB_CORRUPTED',
      hint: 'enrich cache clear starts a new one',
    });
  });

  it("by lmdb's message when there is no errno (it throws plain errors)", () => {
    const hintOf = (message: string) => describeUnusable(dir, new Error(message)).hint;
    expect(hintOf('open failed: Permission denied')).toMatch(/^run as the user/);
    expect(hintOf('Not a directory')).toMatch(/^set ENRICH_CACHE_DIR to a directory/);
    expect(hintOf('Is a directory')).toMatch(/^move or remove/);
    expect(hintOf('MDB_INVALID: File is not an LMDB file')).toBe(
      'enrich cache clear starts a new one',
    );
  });

  it("a cache command's error: FILE_SYSTEM, the path, why (or the errno), a hint as a sentence", () => {
    const denied = cacheError(dir, 'cannot be cleared', coded('EACCES', 'EACCES: denied'));
    expect(denied).toMatchObject({
      code: 'FILE_SYSTEM',
      message: `the results cache in ${dir} cannot be cleared (EACCES: denied)`,
      location: { file: dir },
      hint: 'Run as the user the directory belongs to, or set ENRICH_CACHE_DIR to a directory of your own.',
      details: { errno: 'EACCES' },
    });
    expect(denied.cause).toBeInstanceOf(Error);
    // A hint that is a command keeps its case; an error with no message gives its errno.
    const damaged = cacheError(dir, 'cannot be read', coded('EIO', ''));
    expect(damaged).toMatchObject({
      message: `the results cache in ${dir} cannot be read (EIO)`,
      hint: 'enrich cache clear starts a new one.',
      details: { errno: 'EIO' },
    });
    expect(cacheError(dir, 'x', 'gone').details).toBeUndefined();
  });

  it('cacheDirError: none for a directory or nothing yet; FILE_SYSTEM for a file there', async () => {
    const base = await tempDir();
    expect(cacheDirError(base)).toBeUndefined();
    expect(cacheDirError(join(base, 'not-yet'))).toBeUndefined();
    const plain = join(base, 'a-file');
    await writeFile(plain, 'x');
    expect(cacheDirError(plain)).toMatchObject({
      code: 'FILE_SYSTEM',
      message: `the results cache in ${plain} cannot be used (${plain} is not a directory)`,
      details: { errno: 'ENOTDIR' },
    });
  });
});
