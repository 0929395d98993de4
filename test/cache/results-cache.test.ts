import { createHash } from 'node:crypto';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import {
  CACHE_FILE,
  openResultsCache,
  type CacheScope,
  type ResultsCacheStore,
} from '../../src/cache/results-cache.js';
import { fillCache } from '../../src/pipeline/run/cache-use.js';
import type { ResultsCache } from '../../src/pipeline/types.js';

const SCOPE: CacheScope = {
  baseUrl: 'http://127.0.0.1:4010',
  account: 'acct',
  kind: 'contacts',
  metadata: { mobile: false },
};

const tempDir = () => mkdtemp(join(tmpdir(), 'enrich-cache-unit-'));

function openOrFail(dir: string): ResultsCacheStore {
  const warnings: string[] = [];
  const store = openResultsCache(dir, (w) => warnings.push(w));
  expect(warnings).toEqual([]);
  if (!store) throw new Error('the cache did not open');
  return store;
}

const contact = {
  error: '',
  credit_charged: true,
  first_name: 'Zoë',
  email: 'zoe@example.com',
  location: { country: 'France', state: null, zip_code: '75001' },
  company: { name: 'Acme', location: { country: 'France' } },
  a_field_the_service_added: [1, 'two', { three: 3 }],
};

describe('the results cache store', () => {
  it('a cache written by the previous format is never served, and its file is removed', async () => {
    const dir = await tempDir();
    // The previous format: msgpack answers in results.mdb, keyed by SHA-256 of (scope, request).
    const scope = JSON.stringify([
      'v1',
      SCOPE.baseUrl,
      SCOPE.account,
      SCOPE.kind,
      [['mobile', false]],
    ]);
    const oldKey = createHash('sha256')
      .update(scope)
      .update('\0')
      .update('req-1')
      .digest('base64url');
    const old = open({ path: join(dir, 'results.mdb'), compression: true });
    await old.put(oldKey, { r: [{ email: 'stale@example.com' }], t: Date.now(), c: true });
    await old.close();

    const store = openOrFail(dir);
    const cache = store.scoped(SCOPE);
    expect(cache.get('req-1')).toBeUndefined();
    expect(store.stats().entries).toBe(0);
    expect((await readdir(dir)).filter((f) => f.startsWith('results.mdb'))).toEqual([]);
    await store.close();
  });

  it('an answer put and closed is read back whole by the next process to open the cache', async () => {
    const dir = await tempDir();
    const first = openOrFail(dir);
    const company = { name: 'Acme', website: 'acme.io', employees: 120, hq_country: 'DE' };
    first.scoped(SCOPE).put('req-1', { records: [contact], at: 1_700_000_000_000, charged: true });
    first.scoped({ ...SCOPE, kind: 'companies' }).put('req-1', {
      records: [company, { ...company, name: 'Acme GmbH' }],
      at: 1_700_000_000_001,
      charged: false,
    });
    await first.close();
    expect(await readdir(dir)).toContain(CACHE_FILE);

    const second = openOrFail(dir);
    expect(second.scoped(SCOPE).get('req-1')).toEqual({
      records: [contact],
      at: 1_700_000_000_000,
      charged: true,
    });
    expect(second.scoped({ ...SCOPE, kind: 'companies' }).get('req-1')?.records).toEqual([
      company,
      { ...company, name: 'Acme GmbH' },
    ]);
    // Another scope (request options) never sees the answer.
    expect(second.scoped({ ...SCOPE, metadata: { mobile: true } }).get('req-1')).toBeUndefined();
    expect(second.stats()).toMatchObject({ entries: 2, charged: 1 });
    await second.close();
  });

  it('keeps answers without the request echoes, filed under the key the classification computed', async () => {
    const dir = await tempDir();
    const store = openOrFail(dir);
    const cache = store.scoped(SCOPE) as ResultsCache;
    const record = {
      ...contact,
      custom_fields: { enrich_row: 4 },
      original_fields: { business_email: 'zoe@example.com' },
    };
    const kept = fillCache(cache, 'contacts', [{ index: 4, key: 'the-row-key' }], {
      records: [record],
      remaining: 100,
      at: 1_700_000_000_000,
    });
    expect(kept).toBe(1);
    await store.flushed();
    expect(cache.get('the-row-key')?.records).toEqual([contact]);
    await store.close();
  });

  it('a request missed in one scope and answered in another is filed in the other only', async () => {
    const dir = await tempDir();
    const store = openOrFail(dir);
    const plain = store.scoped(SCOPE);
    const mobile = store.scoped({ ...SCOPE, metadata: { mobile: true } });
    // The other scope misses last: a memo of missed keys shared by scopes would file it there.
    expect(mobile.get('req-1')).toBeUndefined();
    expect(plain.get('req-1')).toBeUndefined();
    mobile.put('req-1', { records: [contact], at: 1, charged: true });
    await store.flushed();
    expect(plain.get('req-1')).toBeUndefined();
    expect(mobile.get('req-1')?.records).toEqual([contact]);
    await store.close();
  });
});
