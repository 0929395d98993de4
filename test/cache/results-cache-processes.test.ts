import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { openResultsCache } from '../../src/cache/results-cache.js';
import { ensureBuilt } from '../api/harness.js';

const DIST = fileURLToPath(new URL('../../dist/cache/results-cache.js', import.meta.url));
const SCOPE = { baseUrl: 'http://127.0.0.1:4010', account: 'a', kind: 'contacts', metadata: {} };
const N = 3000;

/** Answers of two shapes (the shared structures of each must not be confused between writers). */
const answerOf = (who: string, i: number) =>
  who === 'A'
    ? { email: `a${i}@x.io`, n: i, nested: { a: i, tag: 'A' } }
    : { website: `b${i}.io`, n: i, extra: [i, 'B'], [`k${i % 40}`]: true };

/** A separate node process that fills the cache in `dir` with N answers of its shape. */
function fill(dir: string, who: string): Promise<number | null> {
  const script = `
    const { openResultsCache } = await import(${JSON.stringify(DIST)});
    const answerOf = ${answerOf.toString()};
    const store = openResultsCache(${JSON.stringify(dir)}, (w) => { console.error(w); process.exit(3); });
    const cache = store.scoped(${JSON.stringify(SCOPE)});
    for (let i = 0; i < ${N}; i++) {
      cache.put(${JSON.stringify(who)} + i, { records: [answerOf(${JSON.stringify(who)}, i)], at: i, charged: true });
      if (i % 250 === 249) await new Promise((r) => setTimeout(r, 1));
    }
    await store.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

beforeAll(ensureBuilt, 120_000);

describe('the results cache shared by processes', () => {
  it('two processes filling it at once each keep every answer exactly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-procs-'));
    expect(await Promise.all([fill(dir, 'A'), fill(dir, 'B')])).toEqual([0, 0]);
    const store = openResultsCache(dir);
    const cache = store?.scoped(SCOPE);
    for (const who of ['A', 'B'])
      for (let i = 0; i < N; i++)
        expect(cache?.get(`${who}${i}`)?.records).toEqual([answerOf(who, i)]);
    expect(store?.stats().entries).toBe(2 * N);
    await store?.close();
  });
});
