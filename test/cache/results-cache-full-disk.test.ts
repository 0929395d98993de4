import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CACHE_FILE, openResultsCache } from '../../src/cache/results-cache.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';

// A results cache on a disk with little room left (a 1 MB tmpfs). lmdb writing into a full
// disk could end the process (its native writer corrupted the heap in 6 of 33 runs of an
// earlier version of this test on Node 24), so the cache stops writing while there is room:
// it is still read, it takes no answers, and it says so once (free-space.ts). How a failed
// commit is reported is tested apart (results-cache-commit.test.ts).

const SCOPE = { baseUrl: 'http://127.0.0.1:4010', account: 'acct', kind: 'contacts', metadata: {} };
const answer = (i: number, bytes: number) => ({
  records: [{ blob: randomBytes(bytes).toString('base64') }],
  at: i,
  charged: true,
});
/** `n` answers of about `bytes` each, written into the cache in `dir` while the margin allowed it. */
async function fill(dir: string, n: number, bytes: number): Promise<void> {
  const store = openResultsCache(dir, () => undefined, { minFreeBytes: 0 });
  for (let i = 0; i < n; i++) store?.scoped(SCOPE).put(`old-${i}`, answer(i, bytes));
  await store?.close();
}
const LOW =
  /^the disk holding the results cache in .* has 0 MB free \(under 64 MB\): no more answers are kept in it/;

describe('the results cache on a disk with little room left', () => {
  rootTest(
    '(root: a tmpfs) is read, takes no more answers, and warns once: lmdb never meets the full disk',
    async () => {
      await withTmpfs('size=1m', async (small) => {
        const dir = join(small, 'cache');
        await fill(dir, 100, 200); // 100 small answers fit in 1 MB
        const size = (await stat(join(dir, CACHE_FILE))).size;

        const warnings: string[] = [];
        const store = openResultsCache(dir, (w) => warnings.push(w));
        expect(warnings).toEqual([]); // opened: it is read
        const cache = store?.scoped(SCOPE);
        expect(cache?.get('old-7')?.at).toBe(7);
        // About 2 MB of incompressible answers for a 1 MB disk: none is written.
        for (let i = 0; i < 1500; i++) cache?.put(`req-${i}`, answer(i, 1000));
        await store?.flushed();
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(LOW);
        expect(cache?.get('req-1')).toBeUndefined();
        expect(cache?.get('old-99')?.at).toBe(99); // still read after the warning
        await store?.close(); // closes: nothing failed
        expect((await stat(join(dir, CACHE_FILE))).size).toBe(size);
        const again = openResultsCache(dir);
        expect(again?.stats().entries).toBe(100);
        await again?.close();
      });
    },
  );

  rootTest(
    '(root: a tmpfs) enrich cache prune on a full disk warns once and removes nothing (enrich cache clear is what frees space)',
    async () => {
      await withTmpfs('size=1m', async (small) => {
        const dir = join(small, 'cache');
        await fill(dir, 300, 500);
        const warnings: string[] = [];
        const store = openResultsCache(dir, (w) => warnings.push(w));
        expect(store?.stats().entries).toBe(300);
        expect(await store?.prune(Number.MAX_SAFE_INTEGER)).toBe(0);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(LOW);
        expect(warnings[0]).toContain('enrich cache clear');
        expect(store?.stats().entries).toBe(300);
        await store?.close();
      });
    },
  );
});
