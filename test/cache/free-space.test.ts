import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  lowSpace,
  MIN_FREE_BYTES,
  PUTS_PER_LOOK,
  statfsFree,
  watchSpace,
} from '../../src/cache/free-space.js';
import { openResultsCache } from '../../src/cache/results-cache.js';

// The results cache stops writing while its disk still has room (lmdb must never meet a full
// disk): how the free space is read, when it is looked at, and what the user is told.

const MB = 2 ** 20;
const SCOPE = { baseUrl: 'u', account: 'a', kind: 'contacts', metadata: {} };

describe('free space under the results cache', () => {
  it('is read with statfs (a real, finite number), and unknown (Infinity: never low) where it cannot be', async () => {
    const free = statfsFree(tmpdir());
    // What df says is available (in bytes) on the same file system, give or take other writers.
    const df = Number(
      execFileSync('df', ['-B1', '--output=avail', tmpdir()], { encoding: 'utf8' }).split('\n')[1],
    );
    expect(Math.abs(free - df)).toBeLessThan(64 * MB);
    expect(statfsFree('/nonexistent/enrich/cache')).toBe(Infinity);
  });

  it('is low under 64 MB (or the given margin), and the warning says how much is left and what to do', () => {
    expect(MIN_FREE_BYTES).toBe(64 * MB);
    expect(lowSpace('/c', { freeBytes: () => 64 * MB })).toBeUndefined();
    expect(lowSpace('/c', { freeBytes: () => 64 * MB - 1 })).toBe(
      'the disk holding the results cache in /c has 63 MB free (under 64 MB): no more answers are kept in it (those already in it are still used; free some space, or enrich cache clear)',
    );
    expect(lowSpace('/c', { freeBytes: () => 5 * MB, minFreeBytes: 5 * MB })).toBeUndefined();
    expect(lowSpace('/c', { freeBytes: () => 0, minFreeBytes: 0 })).toBeUndefined();
  });

  it(`is looked at before the first put and every ${PUTS_PER_LOOK} puts, before each prune, and once low stays low with one warning`, () => {
    let free = 100 * MB;
    const looked: number[] = [];
    const warnings: string[] = [];
    const watch = watchSpace('/c', { freeBytes: () => (looked.push(free), free) }, (w) =>
      warnings.push(w),
    );
    const puts = (n: number) => Array.from({ length: n }, () => watch.toPut());
    expect(puts(1)).toEqual([true]);
    expect(looked).toHaveLength(1);
    expect(puts(PUTS_PER_LOOK - 1).every(Boolean)).toBe(true);
    expect(looked).toHaveLength(1); // puts 2..64: no look
    expect(puts(1)).toEqual([true]);
    expect(looked).toHaveLength(2); // put 65 looks again
    expect(watch.toWrite()).toBe(true); // a prune looks at once
    expect(looked).toHaveLength(3);
    free = 10 * MB;
    expect(puts(PUTS_PER_LOOK).every(Boolean)).toBe(true); // the look after a prune starts anew
    expect(puts(1)).toEqual([false]);
    expect(looked).toHaveLength(4);
    free = 100 * MB; // freed meanwhile: this process writes no more anyway
    expect(puts(200).some(Boolean)).toBe(false);
    expect(watch.toWrite()).toBe(false);
    expect(looked).toHaveLength(4);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('has 10 MB free (under 64 MB)');
  });

  it('a run whose disk fills up keeps the answers put before, and takes none after', async () => {
    let free = 100 * MB;
    const warnings: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-space-'));
    const store = openResultsCache(dir, (w) => warnings.push(w), { freeBytes: () => free });
    const cache = store?.scoped(SCOPE);
    for (let i = 0; i < PUTS_PER_LOOK; i++)
      cache?.put(`a-${i}`, { records: [], at: i, charged: true });
    free = MB;
    for (let i = 0; i < 10; i++) cache?.put(`b-${i}`, { records: [], at: i, charged: true });
    await store?.flushed();
    expect(cache?.get(`a-${PUTS_PER_LOOK - 1}`)?.at).toBe(PUTS_PER_LOOK - 1);
    expect(cache?.get('b-0')).toBeUndefined();
    expect(store?.stats().entries).toBe(PUTS_PER_LOOK);
    expect(await store?.prune(Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(warnings).toHaveLength(1);
    await store?.close();
  });
});
