import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CACHE_FILE,
  clearCache,
  openResultsCache,
  type CacheScope,
  type ResultsCacheStore,
} from '../../src/cache/results-cache.js';
import {
  currentBoot,
  MARK_PREFIX,
  MARKING_PREFIX,
  markedWrites,
  removeAllMarks,
  removeFlushedMarks,
  sameBoot,
  staleMarks,
} from '../../src/cache/unsynced.js';
import { deadPid } from '../helpers/pids.js';

// The cache commits without flushing and flushes once when closed (unsynced.ts): a process
// marks the cache before its first write and unmarks it after its flush; a mark of an earlier
// boot (the machine stopped mid-write) starts the cache anew.

const SCOPE: CacheScope = {
  baseUrl: 'http://127.0.0.1:4010',
  account: 'acct',
  kind: 'contacts',
  metadata: {},
};

const open: ResultsCacheStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const tempDir = () => mkdtemp(join(tmpdir(), 'enrich-unsynced-'));

function opened(dir: string) {
  const warnings: string[] = [];
  const store = openResultsCache(dir, (w) => warnings.push(w));
  if (!store) throw new Error(`the cache did not open: ${warnings.join('; ')}`);
  open.push(store);
  return { store, cache: store.scoped(SCOPE), warnings };
}

const answer = { records: [{ email: 'jane@acme.com' }], at: 1_000, charged: true };

const marks = async (dir: string) =>
  (await readdir(dir)).filter((n) => n.startsWith(MARK_PREFIX)).sort();

/** A cache in `dir` holding one answer under "k", flushed and closed. */
async function cacheWithAnswer(dir: string) {
  const { store, cache } = opened(dir);
  cache.put('k', answer);
  await store.close();
  open.splice(open.indexOf(store), 1);
}

const writeMark = (dir: string, name: string, content: unknown) =>
  writeFile(
    join(dir, `${MARK_PREFIX}${name}`),
    typeof content === 'string' ? content : JSON.stringify(content),
  );

describe('boots', () => {
  it('are told apart by the kernel id when both have one, else by boot time within two minutes', () => {
    expect(sameBoot({ id: 'a', at: 0 }, { id: 'a', at: 10_000_000 })).toBe(true);
    expect(sameBoot({ id: 'a', at: 0 }, { id: 'b', at: 0 })).toBe(false);
    expect(sameBoot({ id: '', at: 0 }, { id: 'b', at: 120_000 })).toBe(true);
    expect(sameBoot({ id: 'a', at: 0 }, { id: '', at: -120_000 })).toBe(true);
    expect(sameBoot({ id: '', at: 0 }, { id: '', at: 120_001 })).toBe(false);
  });

  it('this one is the kernel boot id (Linux) and the time the uptime counts from', () => {
    const boot = currentBoot();
    const idFile = '/proc/sys/kernel/random/boot_id';
    expect(boot.id).toBe(existsSync(idFile) ? readFileSync(idFile, 'utf8').trim() : '');
    expect(Math.abs(boot.at - (Date.now() - uptime() * 1000))).toBeLessThan(2_000);
    expect(sameBoot(boot, currentBoot())).toBe(true);
  });
});

describe('a process that writes', () => {
  it('leaves one mark (its pid, this boot) before its first commit and removes it after the flush', async () => {
    const dir = await tempDir();
    const { store, cache } = opened(dir);
    expect(await marks(dir)).toEqual([]);
    cache.put('k', answer);
    cache.put('k2', answer);
    const [name, ...more] = await marks(dir);
    expect(more).toEqual([]);
    const mark = JSON.parse(readFileSync(join(dir, name!), 'utf8')) as {
      pid: number;
      boot: { id: string; at: number };
    };
    expect(mark.pid).toBe(process.pid);
    expect(mark.boot.id).toBe(currentBoot().id);
    expect(sameBoot(mark.boot, { id: '', at: currentBoot().at })).toBe(true);
    expect((await readdir(dir)).filter((n) => n.startsWith(MARKING_PREFIX))).toEqual([]);
    await store.flushed();
    expect(await marks(dir)).toEqual([]);
    expect(opened(dir).cache.get('k')).toEqual({
      records: answer.records,
      at: 1_000,
      charged: true,
    });
  });

  it('keeps its mark when it writes again while the flush runs, until the next flush', async () => {
    const dir = await tempDir();
    const { store, cache } = opened(dir);
    cache.put('k', answer);
    const flushing = store.flushed();
    cache.put('k2', answer);
    await flushing;
    expect(await marks(dir)).toHaveLength(1);
    await store.flushed();
    expect(await marks(dir)).toEqual([]);
  });

  it('marks before pruning too, and a run that only reads leaves no mark', async () => {
    const dir = await tempDir();
    await cacheWithAnswer(dir);
    const reader = opened(dir);
    expect(reader.cache.get('k')).toBeDefined();
    expect(await marks(dir)).toEqual([]);
    await reader.store.prune(5_000);
    expect(await marks(dir)).toHaveLength(1);
    await reader.store.close();
    expect(await marks(dir)).toEqual([]);
    expect(opened(dir).cache.get('k')).toBeUndefined();
  });
});

describe('a mark left behind', () => {
  it('of an earlier boot starts the cache anew, with a warning, even over a damaged file', async () => {
    const dir = await tempDir();
    await cacheWithAnswer(dir);
    await writeMark(dir, '1-aa', { pid: 1, boot: { id: 'an-earlier-boot', at: 0 } });
    expect(staleMarks(dir)).toEqual([`${MARK_PREFIX}1-aa`]);
    const { cache, warnings } = opened(dir);
    expect(warnings).toEqual([
      expect.stringContaining(
        'was being written when the machine stopped, and may be damaged: starting a new one',
      ),
    ]);
    expect(cache.get('k')).toBeUndefined();
    expect(await marks(dir)).toEqual([]);

    // lmdb would refuse (or crash on) this file: it is removed before it is opened.
    const dir2 = await tempDir();
    await writeFile(join(dir2, CACHE_FILE), Buffer.alloc(8192, 0xab));
    await writeMark(dir2, '1-bb', { pid: 1, boot: { id: 'an-earlier-boot', at: 0 } });
    const again = opened(dir2);
    expect(again.warnings).toEqual([expect.stringContaining('when the machine stopped')]);
    again.cache.put('k', answer);
    await again.store.flushed();
    expect(again.cache.get('k')).toBeDefined();
  });

  it('that cannot be read counts as one of an earlier boot', async () => {
    const dir = await tempDir();
    await cacheWithAnswer(dir);
    await writeMark(dir, '1-cc', '{"pid":1,');
    const { cache, warnings } = opened(dir);
    expect(warnings).toEqual([expect.stringContaining('when the machine stopped')]);
    expect(cache.get('k')).toBeUndefined();
  });

  it("of this boot keeps the answers; a dead process's goes with the next flush, a running one's stays", async () => {
    const dir = await tempDir();
    await cacheWithAnswer(dir);
    const boot = currentBoot();
    await writeMark(dir, 'dead', { pid: deadPid(), boot });
    await writeMark(dir, 'running', { pid: process.ppid, boot });
    const { store, cache, warnings } = opened(dir);
    expect(warnings).toEqual([]);
    expect(cache.get('k')).toBeDefined();
    await store.flushed(); // nothing written: nothing flushed, nothing removed
    expect(await marks(dir)).toEqual([`${MARK_PREFIX}dead`, `${MARK_PREFIX}running`]);
    cache.put('k2', answer);
    await store.flushed();
    expect(await marks(dir)).toEqual([`${MARK_PREFIX}running`]);
  });
});

it('enrich cache clear removes the marks with the files', async () => {
  const dir = await tempDir();
  const { store, cache } = opened(dir);
  cache.put('k', answer);
  await writeFile(join(dir, `${MARKING_PREFIX}1-dd`), '');
  await store.close();
  open.splice(0);
  await writeMark(dir, 'x', { pid: 1, boot: currentBoot() });
  await clearCache(dir);
  expect(await readdir(dir)).toEqual([]);
});

describe('marks, one by one', () => {
  it("are named by the cache file, the writer's pid and a random part: two stores of one process each have their own", async () => {
    const dir = await tempDir();
    const a = opened(dir);
    const b = opened(dir);
    a.cache.put('a', answer);
    b.cache.put('b', answer);
    const names = await marks(dir);
    expect(names).toHaveLength(2);
    for (const n of names)
      expect(n).toMatch(new RegExp(`^results-v2\\.mdb-unsynced-${process.pid}-[0-9a-f]{8}$`));
    await a.store.flushed();
    // b's commits may not be flushed yet: its mark (this pid, another store) stays.
    expect(await marks(dir)).toHaveLength(1);
    await b.store.flushed();
    expect(await marks(dir)).toEqual([]);
  });

  it('that lack a field count as unreadable', async () => {
    const boot = currentBoot();
    for (const content of [
      { boot },
      { pid: 1, boot: { at: boot.at } },
      { pid: 1, boot: { id: boot.id } },
      { pid: 1.5, boot },
      { pid: 1 },
      null,
    ]) {
      const dir = await tempDir();
      await writeMark(dir, 'm', content);
      expect(staleMarks(dir)).toEqual([`${MARK_PREFIX}m`]);
    }
    const dir = await tempDir();
    await writeMark(dir, 'm', { pid: 1, boot });
    expect(staleMarks(dir)).toEqual([]);
  });

  it('starting anew removes the stale marks only, and works with no file left to remove', async () => {
    const dir = await tempDir();
    await writeMark(dir, 'old', { pid: 1, boot: { id: 'an-earlier-boot', at: 0 } });
    await writeMark(dir, 'running', { pid: process.ppid, boot: currentBoot() });
    const { warnings, store, cache } = opened(dir);
    expect(warnings).toEqual([expect.stringContaining('when the machine stopped')]);
    expect(await marks(dir)).toEqual([`${MARK_PREFIX}running`]);
    cache.put('k', answer);
    await store.flushed();
    expect(cache.get('k')).toBeDefined();
  });

  it("after a flush, those of another boot, unreadable ones and a running process's stay", async () => {
    const dir = await tempDir();
    const boot = { id: 'this-boot', at: 0 };
    await writeMark(dir, 'own', { pid: process.pid, boot });
    await writeMark(dir, 'other-boot', { pid: deadPid(), boot: { id: 'another', at: 0 } });
    await writeMark(dir, 'unreadable', '{');
    await writeMark(dir, 'running', { pid: process.ppid, boot });
    await writeMark(dir, 'dead', { pid: deadPid(), boot });
    removeFlushedMarks(dir, `${MARK_PREFIX}own`, boot);
    expect(await marks(dir)).toEqual(
      ['other-boot', 'running', 'unreadable'].map((n) => `${MARK_PREFIX}${n}`),
    );
  });

  it('removing all of them leaves other files, and a missing directory has none', async () => {
    const dir = await tempDir();
    await writeMark(dir, 'a', { pid: 1, boot: currentBoot() });
    await writeFile(join(dir, `${MARKING_PREFIX}b`), '');
    await writeFile(join(dir, 'other'), '');
    removeAllMarks(dir);
    expect(await readdir(dir)).toEqual(['other']);
    const missing = join(dir, 'missing');
    expect(staleMarks(missing)).toEqual([]);
    expect(() => removeAllMarks(missing)).not.toThrow();
  });
});

describe('a writer between flushes', () => {
  it('flushes only when it wrote, once per flush asked for; a failed flush or commit keeps its mark', async () => {
    const dir = await tempDir();
    let syncs = 0;
    let failSync = false;
    const w = markedWrites(dir, () => {
      syncs++;
      return failSync ? Promise.reject(new Error('EIO')) : Promise.resolve();
    });
    await w.flushAfter(Promise.resolve());
    expect(syncs).toBe(0);
    w.beforeWrite();
    w.beforeWrite();
    expect(await marks(dir)).toHaveLength(1);
    failSync = true;
    await expect(w.flushAfter(Promise.resolve())).rejects.toThrow('EIO');
    expect(await marks(dir)).toHaveLength(1);
    await expect(w.flushAfter(Promise.reject(new Error('commit failed')))).rejects.toThrow(
      'commit failed',
    );
    expect(syncs).toBe(1);
    expect(await marks(dir)).toHaveLength(1);
    failSync = false;
    await w.flushAfter(Promise.resolve());
    expect(syncs).toBe(2);
    expect(await marks(dir)).toEqual([]);
    await w.flushAfter(Promise.resolve());
    expect(syncs).toBe(2);
  });
});
