import { spawn } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { open, type Key } from 'lmdb';
import { createKeyMemo, scopeString } from '../../src/cache/cache-keys.js';
import { RECORD_SHAPES } from '../../src/cache/record-shapes.js';
import { MARK_PREFIX } from '../../src/cache/unsynced.js';
import { CACHE_FILE, openResultsCache } from '../../src/cache/results-cache.js';
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
    // One of them wrote the records' shapes when the file was new; neither added to them.
    const raw = openAsEarlierBuilds(dir);
    expect(raw.get(STRUCTURES)).toEqual(RECORD_SHAPES);
    await raw.close();
  });
});

describe('a process killed before its flush', () => {
  it('loses no committed answer; its mark stays until the next writer flushes the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-killed-'));
    // Commits are not flushed one by one (unsynced.ts): the kernel keeps them for the next process.
    const script = `
      const { openResultsCache } = await import(${JSON.stringify(DIST)});
      const store = openResultsCache(${JSON.stringify(dir)});
      const cache = store.scoped(${JSON.stringify(SCOPE)});
      for (let i = 0; i < 100; i++) cache.put('k' + i, { records: [{ n: i }], at: i, charged: true });
      const reader = openResultsCache(${JSON.stringify(dir)}).scoped(${JSON.stringify(SCOPE)});
      while (reader.get('k99') === undefined) await new Promise((r) => setTimeout(r, 5));
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: 'inherit',
    });
    const [, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on('close', (code, sig) => resolve([code, sig])),
    );
    expect(signal).toBe('SIGKILL');
    const marked = async () => (await readdir(dir)).filter((n) => n.startsWith(MARK_PREFIX));
    expect(await marked()).toHaveLength(1);
    const warnings: string[] = [];
    const store = openResultsCache(dir, (w) => warnings.push(w))!;
    const cache = store.scoped(SCOPE);
    for (let i = 0; i < 100; i++) expect(cache.get(`k${i}`)?.records).toEqual([{ n: i }]);
    expect(warnings).toEqual([]);
    cache.put('later', { records: [{ n: -1 }], at: 1, charged: false });
    await store.close();
    expect(await marked()).toEqual([]);
  });
});

const STRUCTURES = Symbol.for('enrich-structures');

/** A contact record as api-spec.md 2.2 lists its fields (without the echoes the cache drops). */
const specContact = {
  error: '',
  credit_charged: true,
  first_name: 'Jürgen',
  last_name: 'Müller',
  email: 'jurgen.muller@acme.de',
  office_phone: '+49 30 5550 1642',
  mobile_phone: '',
  location: { country: 'Germany', state: 'Berlin', zip_code: '10115' },
  title: 'Engineering Manager',
  job_level: 'Manager',
  department: 'Engineering',
  prof_network: 'https://profnet.example/in/jurgen-muller',
  company: {
    name: 'Acme',
    description: 'Acme makes things.',
    website: 'acme.de',
    employees_category: '51-200',
    revenue_category: '$10M-$50M',
    location: { country: 'Germany', state: 'Berlin', zip_code: '10115' },
  },
};

/** The cache file opened as earlier builds did: field names kept once, in a shared table. */
function openAsEarlierBuilds(dir: string) {
  return open<{ r: unknown[]; t: number; c: boolean }, Key>({
    path: join(dir, CACHE_FILE),
    compression: true,
    sharedStructuresKey: STRUCTURES,
  });
}

describe('what writers share in the cache file', () => {
  it("keeps the records' shapes once, and adds no other shape to them", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-shapes-'));
    const store = openResultsCache(dir)!;
    const cache = store.scoped(SCOPE);
    for (let i = 0; i < 200; i++)
      cache.put(`r${i}`, { records: [answerOf(i % 2 ? 'A' : 'B', i)], at: i, charged: true });
    cache.put('spec', { records: [specContact], at: 1, charged: true });
    // The same fields in another order: a shape of its own, defined inside the answer.
    const reordered = Object.fromEntries(Object.entries(specContact).reverse());
    cache.put('reordered', { records: [reordered], at: 2, charged: true });
    await store.close();

    const raw = openAsEarlierBuilds(dir);
    expect(raw.get(STRUCTURES)).toEqual(RECORD_SHAPES);
    const keys = createKeyMemo(scopeString(SCOPE));
    const bytes = (k: string) => Buffer.from(raw.getBinary(keys.of(k))!);
    // A record of the service's shape is kept without its field names; another one with them.
    expect(bytes('spec').includes('first_name')).toBe(false);
    expect(bytes('reordered').includes('first_name')).toBe(true);
    expect(bytes('spec').length).toBeLessThan(bytes('reordered').length * 0.75);
    await raw.close();

    const again = openResultsCache(dir)!;
    const read = again.scoped(SCOPE);
    for (let i = 0; i < 200; i++)
      expect(read.get(`r${i}`)?.records).toEqual([answerOf(i % 2 ? 'A' : 'B', i)]);
    expect(read.get('spec')?.records).toEqual([specContact]);
    expect(Object.keys(read.get('reordered')!.records[0]!)).toEqual(Object.keys(reordered));
    await again.close();
  });

  it('reads the answers earlier builds wrote with a shared table, and leaves that table as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-cache-earlier-'));
    const keys = createKeyMemo(scopeString(SCOPE));
    const raw = openAsEarlierBuilds(dir);
    for (let i = 0; i < 100; i++)
      await raw.put(keys.of(`old${i}`), { r: [answerOf(i % 2 ? 'A' : 'B', i)], t: i, c: true });
    const table = raw.getBinary(STRUCTURES);
    expect(table?.length).toBeGreaterThan(0); // those answers do depend on the table
    await raw.close();

    const store = openResultsCache(dir)!;
    const cache = store.scoped(SCOPE);
    for (let i = 0; i < 100; i++) {
      expect(cache.get(`old${i}`)).toEqual({
        records: [answerOf(i % 2 ? 'A' : 'B', i)],
        at: i,
        charged: true,
      });
      cache.put(`new${i}`, {
        records: [{ ...answerOf('B', i + 1000), fresh: i }],
        at: i,
        charged: false,
      });
    }
    await store.close();
    const after = openAsEarlierBuilds(dir);
    expect(Buffer.from(after.getBinary(STRUCTURES)!)).toEqual(Buffer.from(table!));
    // And earlier builds read what this one wrote.
    expect(after.get(keys.of('new7'))?.r).toEqual([{ ...answerOf('B', 1007), fresh: 7 }]);
    await after.close();
  });
});
