import { describe, expect, it } from 'vitest';
import { indexBatch, shareEchoed } from '../../src/pipeline/join/join.js';
import { SameRequests } from '../../src/pipeline/join/same-request.js';

const keyOf = (f: Record<string, unknown>) =>
  typeof f.company_website === 'string' ? f.company_website : undefined;

/** A company match as the service answers it; `row` set: with its row id, else echo only. */
const match = (name: string, row?: number) => ({
  error: '',
  credit_charged: true,
  name,
  original_fields: { company_website: 'acme.com' },
  ...(row === undefined ? {} : { custom_fields: { enrich_row: row } }),
});

const names = (m: Map<number, Record<string, unknown>[]>, row: number) =>
  (m.get(row) ?? []).map((r) => r.name);

describe('records without a row id of a request several rows sent (--no-dedupe)', () => {
  it('notes only the keys a batch sent more than once, and finds them by row', () => {
    const same = new SameRequests();
    same.note([
      { index: 0, key: 'a' },
      { index: 1, key: 'b' },
      { index: 3, key: 'a' },
    ]);
    same.note([{ index: 4, key: 'a' }]);
    same.note([
      { index: 5, key: 'c' },
      { index: 6, key: 'a' },
      { index: 7, key: 'c' },
    ]);
    expect(same.of(0, 'a')).toEqual([0, 3]);
    expect(same.of(3, 'a')).toEqual([0, 3]);
    expect(same.of(1, 'b')).toBeUndefined();
    // Another batch's copy of the same request is another job's: never shared.
    expect(same.of(4, 'a')).toBeUndefined();
    expect(same.of(6, 'a')).toBeUndefined();
    expect(same.of(7, 'c')).toEqual([5, 7]);
    expect(same.of(9, 'c')).toBeUndefined();
  });

  it('contacts: one record to each row in turn, never one record to two rows', () => {
    const recs = [1, 2, 3].map((i) => ({
      error: '',
      email: `copy${i}`,
      original_fields: { company_website: 'acme.com' },
    }));
    const lookup = indexBatch(recs, () => true, keyOf);
    const shares = shareEchoed(lookup, 'acme.com', [2, 5, 9]);
    expect([2, 5, 9].map((r) => shares.get(r)?.length)).toEqual([1, 1, 1]);
    expect(new Set([2, 5, 9].map((r) => shares.get(r)?.[0])).size).toBe(3);
    // One record lost: the rows that had theirs keep them, the last goes without.
    const fewer = shareEchoed(
      indexBatch(recs.slice(0, 2), () => true, keyOf),
      'acme.com',
      [2, 5, 9],
    );
    expect([2, 5, 9].map((r) => fewer.get(r)?.length ?? 0)).toEqual([1, 1, 0]);
  });

  it('a row that has its own record by row id takes none of the echoed ones', () => {
    const recs = [match('x', 5), match('x'), match('x')];
    const shares = shareEchoed(
      indexBatch(recs, () => true, keyOf),
      'acme.com',
      [2, 5, 9],
    );
    expect(shares.has(5)).toBe(false);
    expect([names(shares, 2), names(shares, 9)]).toEqual([['x'], ['x']]);
  });

  it('companies (--top 3), shuffled: each row gets one copy of each match, whatever came with its row id', () => {
    const recs = [
      match('B'),
      match('A', 1),
      match('C'),
      match('A'),
      match('C', 4),
      match('B'),
      match('A'),
      match('C'),
      match('B', 1),
    ];
    const lookup = indexBatch(recs, () => true, keyOf);
    const shares = shareEchoed(lookup, 'acme.com', [1, 4, 7]);
    const all = (r: number) => [
      ...(lookup.byRow.get(r) ?? []).map((x) => x.name),
      ...names(shares, r),
    ];
    expect(all(1).sort()).toEqual(['A', 'B', 'C']);
    expect(all(4).sort()).toEqual(['A', 'B', 'C']);
    expect(all(7).sort()).toEqual(['A', 'B', 'C']);
    // Every echoed record placed once.
    const placed = [...shares.values()].flat();
    expect(new Set(placed).size).toBe(placed.length);
    expect(placed).toHaveLength(lookup.byKey.get('acme.com')?.length ?? -1);
  });

  it('matches go whole to the first rows, whatever the order of the answer; records with an error to the rows after them', () => {
    // Cut by the credits between two requests, answered in an order that shows the skipped first.
    const skipped = () => ({
      error: 'No data returned: quota reached',
      credit_charged: false,
      original_fields: { company_website: 'acme.com' },
    });
    const index = (recs: Record<string, unknown>[]) => indexBatch(recs, () => true, keyOf);
    const top2 = shareEchoed(
      index([skipped(), skipped(), match('B'), match('A')]),
      'acme.com',
      [1, 2],
    );
    expect(names(top2, 1)).toEqual(['B', 'A']);
    expect(top2.get(2)?.map((r) => r.credit_charged)).toEqual([false, false]);
    const contacts = shareEchoed(index([skipped(), match('A')]), 'acme.com', [3, 4]);
    expect(names(contacts, 3)).toEqual(['A']);
    expect(contacts.get(4)?.[0]?.credit_charged).toBe(false);
  });

  it('places every record even when copies do not line up (a dropped or repeated one)', () => {
    const recs = [match('A'), match('A'), match('A'), match('B')];
    const lookup = indexBatch(recs, () => true, keyOf);
    const shares = shareEchoed(lookup, 'acme.com', [0, 1]);
    expect(names(shares, 0)).toEqual(['A', 'B']);
    expect(names(shares, 1)).toEqual(['A', 'A']);
  });
});
