import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { openResultsCache } from '../../src/cache/results-cache.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';

// A results cache whose disk fills up mid-run. lmdb rejects the puts of a failed commit
// with "Commit failed" and rejects a second promise (`commitError`) with the cause: nothing
// handled that one, so a full disk ended the whole run with an unhandled rejection instead
// of the one warning every other cache failure gives.

const SCOPE = { baseUrl: 'http://127.0.0.1:4010', account: 'acct', kind: 'contacts', metadata: {} };

describe('the results cache on a disk that fills up', () => {
  rootTest(
    '(root: a tmpfs) warns once, with the cause, and goes on without the cache: the run is not ended',
    async () => {
      // Lazily: lmdb keeps a failed environment mapped (its close waits for ever, see close).
      await withTmpfs(
        'size=1m',
        async (small) => {
          const warnings: string[] = [];
          const store = openResultsCache(join(small, 'cache'), (w) => warnings.push(w));
          expect(warnings).toEqual([]);
          const cache = store?.scoped(SCOPE);
          // About 2 MB of incompressible answers for a 1 MB disk.
          for (let i = 0; i < 1500; i++) {
            const blob = randomBytes(1000).toString('base64');
            cache?.put(`req-${i}`, { records: [{ blob }], at: i, charged: true });
          }
          // Resolves (lmdb's own flushed never settles after a failed commit), once warned.
          await store?.flushed();
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toMatch(
            /^the results cache in .* cannot be used \(.+\); going on without it/,
          );
          expect(warnings[0]).not.toContain('Commit failed');
          expect(cache?.get('req-1')).toBeUndefined();
          await store?.close();
        },
        { lazy: true },
      );
    },
  );

  rootTest(
    '(root: a tmpfs) enrich cache prune on a full disk warns once and removes nothing, instead of ending with an unhandled rejection or waiting for ever',
    async () => {
      // Lazily: lmdb keeps a failed environment mapped (its close waits for ever, see close).
      await withTmpfs(
        'size=1m',
        async (small) => {
          const dir = join(small, 'cache');
          const filled = openResultsCache(dir);
          const cache = filled?.scoped(SCOPE);
          for (let i = 0; i < 300; i++) {
            cache?.put(`req-${i}`, {
              records: [{ blob: randomBytes(500).toString('base64') }],
              at: i,
              charged: true,
            });
          }
          await filled?.close();
          // Whatever space is left goes to another file: removing entries needs new pages.
          await writeFile(join(small, 'filler'), Buffer.alloc(2 << 20)).catch(() => undefined);
          const warnings: string[] = [];
          const store = openResultsCache(dir, (w) => warnings.push(w));
          expect(store?.stats().entries).toBe(300);
          expect(await store?.prune(Number.MAX_SAFE_INTEGER)).toBe(0);
          expect(warnings).toHaveLength(1);
          expect(warnings[0]).toMatch(/cannot be used \(.*No space left on device.*\)/);
          await store?.close();
        },
        { lazy: true },
      );
    },
  );
});
