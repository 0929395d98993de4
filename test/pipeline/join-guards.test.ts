import { describe, expect, it } from 'vitest';
import {
  chargeUnknownRows,
  indexBatch,
  mergeRecords,
  originalFieldsOf,
  outcomeFromRecords,
  recordsForRow,
  rowIdOf,
} from '../../src/pipeline/join/join.js';
import type { LeafResult } from '../../src/pipeline/types.js';

// The join's guards (issue 21: mutants of join.ts that no test saw). A record attached to
// the wrong row, or a charge reported as none, is silent data corruption.

const keyOf = (f: Record<string, unknown>) =>
  typeof f.business_email === 'string' ? f.business_email : undefined;

describe('the join never attaches a record to a row it does not provably belong to', () => {
  it.each([
    ['an empty string', ''],
    ['blanks', '  '],
    ['null', null],
    ['a boolean', true],
    ['a fraction', 1.5],
    ['a fractional string', '2.5'],
    ['a number past 2^53', 2 ** 53],
    ['a negative string', '-3'],
  ])('enrich_row holding %s is no row id (never row 0)', (_what, raw) => {
    expect(rowIdOf({ custom_fields: { enrich_row: raw } })).toBeUndefined();
  });

  it('reads a row id written with blanks around it, and row 0 itself', () => {
    expect(rowIdOf({ custom_fields: { enrich_row: ' 4 ' } })).toBe(4);
    expect(rowIdOf({ custom_fields: { enrich_row: 0 } })).toBe(0);
    expect(rowIdOf({ custom_fields: { enrich_row: '0' } })).toBe(0);
  });

  it.each([
    ['null', null],
    ['a string', 'enrich_row=3'],
    ['a number', 3],
  ])('custom_fields holding %s: no row id, the record found by its echo instead', (_w, cf) => {
    const record = { custom_fields: cf, original_fields: { business_email: 'a@x.io' } };
    expect(rowIdOf(record)).toBeUndefined();
    const lookup = indexBatch([record], () => true, keyOf);
    expect(recordsForRow(lookup, 0, 'a@x.io', [0])).toEqual([record]);
    expect(lookup.byRow.size).toBe(0);
  });

  it('a record naming a row of another batch is dropped, not joined by its echo', () => {
    const record = {
      custom_fields: { enrich_row: 9 },
      original_fields: { business_email: 'a@x.io' },
    };
    const lookup = indexBatch([record], (r) => r < 5, keyOf);
    expect(recordsForRow(lookup, 0, 'a@x.io', [0])).toBeUndefined();
    expect(lookup.byKey.size).toBe(0);
  });

  it('skips entries that are not records, and echoes it cannot key', () => {
    const good = { custom_fields: { enrich_row: 1 } };
    const lookup = indexBatch(
      [null as never, 'x' as never, { original_fields: { first_name: 'A' } }, good],
      () => true,
      keyOf,
    );
    expect(recordsForRow(lookup, 1, 'k', [1])).toEqual([good]);
    expect(lookup.byKey.size).toBe(0);
    expect(lookup.at).toBeUndefined();
  });

  it("merges a row's records by id and by echo in the service's order (--top ranks kept)", () => {
    const echo = { business_email: 'a@x.io' };
    const records = [
      { custom_fields: { enrich_row: 7 }, name: 'first' },
      { original_fields: echo, name: 'second' },
      { custom_fields: { enrich_row: 7 }, name: 'third' },
      { original_fields: echo, name: 'fourth' },
    ];
    const lookup = indexBatch(records, () => true, keyOf);
    const names = recordsForRow(lookup, 7, 'a@x.io', [7])?.map((r) => r.name);
    expect(names).toEqual(['first', 'second', 'third', 'fourth']);
    expect(lookup.at?.get(records[3] as never)).toBe(3);
    // Without the echoed ones, only the row's own.
    const own = mergeRecords(lookup, 7, undefined)?.map((r) => r.name);
    expect(own).toEqual(['first', 'third']);
  });

  it('reads original_fields as an object or a JSON object string, nothing else', () => {
    expect(originalFieldsOf({ original_fields: { a: 1 } })).toEqual({ a: 1 });
    expect(originalFieldsOf({ original_fields: '{"a":1}' })).toEqual({ a: 1 });
    expect(originalFieldsOf({ original_fields: '[1]' })).toBeUndefined();
    expect(originalFieldsOf({ original_fields: 'null' })).toBeUndefined();
    expect(originalFieldsOf({ original_fields: '{oops' })).toBeUndefined();
    expect(originalFieldsOf({ original_fields: [{ a: 1 }] })).toBeUndefined();
    expect(originalFieldsOf({ original_fields: null })).toBeUndefined();
  });
});

describe('a row reports every charge', () => {
  it('a company with some paid matches reads credit_charged=true, even beside unpaid ones', () => {
    const paid = { error: '', credit_charged: true, name: 'A' };
    const unpaid = { error: 'Insufficient credits', credit_charged: false };
    expect(outcomeFromRecords([paid, unpaid], 0)).toMatchObject({
      status: 'enriched',
      creditCharged: true,
      error: '1 of 2 matches not returned: Insufficient credits',
    });
    expect(outcomeFromRecords([unpaid, paid], 0).creditCharged).toBe(true);
    // Only matches without an error are kept.
    expect(outcomeFromRecords([unpaid, paid], 0).records).toEqual([paid]);
  });

  it('a failed or unmatched row whose record was charged says so; one never charged says false', () => {
    const chargedError = { error: 'Lookup failed', credit_charged: true, title: 'CEO' };
    expect(outcomeFromRecords([chargedError], 5)).toMatchObject({
      status: 'failed',
      creditCharged: true,
      error: 'Lookup failed',
    });
    const chargedNoMatch = { error: 'No match', credit_charged: true };
    expect(outcomeFromRecords([chargedNoMatch], 5)).toMatchObject({
      status: 'not_found',
      creditCharged: true,
    });
    const free = { error: '  spaced  ', credit_charged: false };
    expect(outcomeFromRecords([free], 5)).toMatchObject({ status: 'not_found', error: 'spaced' });
    expect(outcomeFromRecords([{ error: '', credit_charged: false }]).creditCharged).toBe(false);
  });

  it('an empty answer for a row is missing: it was sent, so its charge is unknown (regression: reported as nothing sent)', () => {
    expect(outcomeFromRecords([])).toEqual({
      status: 'missing',
      error: 'the job returned no result for this row',
      creditCharged: 'unknown',
      records: [],
    });
  });

  it('counts the rows whose charge is unknown: unconfirmed, or accepted and never downloaded', () => {
    const leaf = (state: LeafResult['state'], jobId?: string) =>
      ({ state, count: 4, ...(jobId ? { jobId } : {}) }) as LeafResult;
    expect(chargeUnknownRows(leaf('unconfirmed'))).toBe(4);
    expect(chargeUnknownRows(leaf('pending', 'j'))).toBe(4);
    expect(chargeUnknownRows(leaf('expired', 'j'))).toBe(4);
    expect(chargeUnknownRows(leaf('spooled', 'j'))).toBe(0);
    expect(chargeUnknownRows(leaf('unsent'))).toBe(0);
    expect(chargeUnknownRows(leaf('failed'))).toBe(0);
  });
});
