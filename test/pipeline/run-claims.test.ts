import { describe, expect, it } from 'vitest';
import type { BatchContext } from '../../src/pipeline/run/batch-context.js';
import type { RefillRow } from '../../src/pipeline/run/refill.js';
import { runClaims, type ResendTo } from '../../src/pipeline/run/run-claims.js';
import type { CachedAnswer, ResolvedRun, ResultsCache } from '../../src/pipeline/types.js';
import { LIBRARY_WORDS } from '../../src/pipeline/words.js';
import { tempDir } from '../integration/bulk-harness.js';

/** A results cache in memory (claim keys: the request keys themselves). */
function memoryCache(): ResultsCache & { answers: Map<string, CachedAnswer> } {
  const answers = new Map<string, CachedAnswer>();
  return {
    answers,
    get: (k) => answers.get(k),
    put: (k, a) => void answers.set(k, a),
    claimKey: (k) => `c:${k}`,
  };
}

/** A row to send again, by its request key. */
function row(index: number, key: string): RefillRow {
  return { row: { index, line: index + 2, cells: [key] }, item: { index, element: {}, key } };
}

/** The row claims of a run reading and filling `cache` in `runsDir` (what refill.claim needs). */
function claimsOf(runsDir: string, cache: ResultsCache, name: string) {
  const run = {
    runsDir,
    batchSize: 10,
    cache: { read: true, write: true, maxAgeMs: 86_400_000 },
    words: LIBRARY_WORDS,
  } as unknown as Pick<ResolvedRun, 'runsDir' | 'batchSize' | 'cache' | 'words'>;
  const ctx = { env: { now: Date.now }, wait: true, deadline: Date.now() + 60_000 };
  const to = { resent: { outcomes: new Map(), over: new Set() } } as unknown as ResendTo;
  const claimed = runClaims(
    run,
    ctx as unknown as BatchContext,
    { cache, run: name, settleRuns: () => Promise.resolve() },
    to,
  );
  if (!claimed) throw new Error('no claims');
  return claimed;
}

describe("a resume's refill rows are claimed like a batch's", () => {
  it('rows another live run holds are left out (with who holds them), the others are this run’s to send', async () => {
    const runsDir = await tempDir('enrich-run-claims-');
    const cache = memoryCache();
    const first = claimsOf(runsDir, cache, 'first');
    const resume = claimsOf(runsDir, cache, 'resume');
    try {
      expect((await first.refill.claim([], [row(0, 'k1'), row(1, 'k2')])).held.size).toBe(0);
      const mine = await resume.refill.claim([], [row(5, 'k2'), row(6, 'k3')]);
      expect(mine.send.map((r) => r.item.key)).toEqual(['k3']);
      expect([...mine.held.entries()]).toEqual([
        ['c:k2', { row: row(5, 'k2'), by: { pid: process.pid, run: 'first' } }],
      ]);
      // k3 is the resume's now: the first run is told so.
      expect([...(await first.refill.claim([], [row(2, 'k3')])).held.keys()]).toEqual(['c:k3']);
    } finally {
      await first.close();
      await resume.close();
    }
  });

  it('a row answered since it was looked up is neither sent nor waited for, and its claim is given back', async () => {
    const runsDir = await tempDir('enrich-run-claims-');
    const cache = memoryCache();
    const resume = claimsOf(runsDir, cache, 'resume');
    const other = claimsOf(runsDir, cache, 'other');
    try {
      cache.put('k1', { records: [{ email: 'a@b.c' }], at: Date.now(), charged: true });
      const mine = await resume.refill.claim([], [row(0, 'k1'), row(1, 'k2')]);
      expect(mine.send.map((r) => r.item.key)).toEqual(['k2']);
      expect(mine.held.size).toBe(0);
      // Given back: another run may claim it (and will find its answer in the cache).
      const theirs = await other.refill.claim([], [row(0, 'k1'), row(1, 'k2')]);
      expect(theirs.send.map((r) => r.item.key)).toEqual([]);
      expect([...theirs.held.keys()]).toEqual(['c:k2']);
    } finally {
      await resume.close();
      await other.close();
    }
  });

  it('rows of a refill batch an earlier attempt journaled are claimed whoever holds them (sent as journaled)', async () => {
    const runsDir = await tempDir('enrich-run-claims-');
    const cache = memoryCache();
    const other = claimsOf(runsDir, cache, 'other');
    const resume = claimsOf(runsDir, cache, 'resume');
    const third = claimsOf(runsDir, cache, 'third');
    try {
      await other.refill.claim([], [row(0, 'k1')]);
      await resume.refill.claim([row(3, 'k1'), row(4, 'k2')], []);
      // Taken though the other run held k1: once that run has ended, a third run waits for the resume.
      await other.close();
      const held = await third.refill.claim([], [row(9, 'k1'), row(10, 'k2')]);
      expect(held.send).toEqual([]);
      expect([...held.held.values()].map((h) => [h.row.item.key, h.by.run])).toEqual([
        ['k1', 'resume'],
        ['k2', 'resume'],
      ]);
    } finally {
      await other.close();
      await resume.close();
      await third.close();
    }
  });
});
