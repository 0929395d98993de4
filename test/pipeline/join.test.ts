import { describe, expect, it } from 'vitest';
import {
  indexBatch,
  mergeRecords,
  outcomeFromRecords,
  recordsForRow,
  rowIdOf,
} from '../../src/pipeline/join/join.js';

const keyOf = (f: Record<string, unknown>) =>
  typeof f.business_email === 'string' ? f.business_email : undefined;

describe('join', () => {
  it('reads row ids from custom_fields, as numbers or numeric strings only', () => {
    expect(rowIdOf({ custom_fields: { enrich_row: 7 } })).toBe(7);
    expect(rowIdOf({ custom_fields: { enrich_row: '7' } })).toBe(7);
    expect(rowIdOf({ custom_fields: { enrich_row: 'x' } })).toBeUndefined();
    expect(rowIdOf({ custom_fields: { enrich_row: -1 } })).toBeUndefined();
    expect(rowIdOf({})).toBeUndefined();
  });

  it('matches by row id, falls back to original_fields, and drops records of other rows', () => {
    const records = [
      { custom_fields: { enrich_row: 2 }, email: 'two' },
      { original_fields: { business_email: 'c@x.io' }, email: 'three' },
      { original_fields: JSON.stringify({ business_email: 'd@x.io' }), email: 'four' },
      { custom_fields: { enrich_row: 99 }, email: 'stranger' },
    ];
    const lookup = indexBatch(records, (r) => r >= 0 && r <= 10, keyOf);
    expect(recordsForRow(lookup, 2, 'b@x.io', [2])?.[0]?.email).toBe('two');
    expect(recordsForRow(lookup, 3, 'c@x.io', [3])?.[0]?.email).toBe('three');
    expect(recordsForRow(lookup, 4, 'd@x.io', [4])?.[0]?.email).toBe('four');
    expect(mergeRecords(lookup, 3, undefined)).toBeUndefined();
    // Sent by rows 3 and 5 alike (--no-dedupe), its one record goes to one of them only.
    expect(recordsForRow(lookup, 3, 'c@x.io', [3, 5])?.[0]?.email).toBe('three');
    expect(recordsForRow(lookup, 5, 'c@x.io', [3, 5])).toBeUndefined();
    expect([...lookup.byRow.keys()]).toEqual([2]);
  });

  it('turns records into an outcome', () => {
    expect(outcomeFromRecords(undefined).status).toBe('missing');
    expect(outcomeFromRecords([{ error: '', credit_charged: true }])).toMatchObject({
      status: 'enriched',
      creditCharged: true,
    });
    expect(outcomeFromRecords([{ error: 'No match found', credit_charged: false }])).toMatchObject({
      status: 'not_found',
      error: 'No match found',
      creditCharged: false,
      records: [],
    });
    // Read from the data, not the wording: no data and credits left is no match, whatever it
    // says; no data and too few credits left is a shortage (failed), whatever it says.
    const bare = { error: 'Something happened', credit_charged: false, email: '' };
    expect(outcomeFromRecords([bare], 12).status).toBe('not_found');
    expect(outcomeFromRecords([bare], 0).status).toBe('failed');
    expect(outcomeFromRecords([{ ...bare, title: 'CEO' }], 12).status).toBe('failed');
    const companies = outcomeFromRecords([{ error: 'x' }, { error: '', name: 'A' }, { name: 'B' }]);
    expect(companies.records.map((r) => r.name)).toEqual(['A', 'B']);
    // Enriched, but the match that came back with an error is not silently dropped.
    expect(companies).toMatchObject({
      status: 'enriched',
      error: '1 of 3 matches not returned: x',
    });
    expect(outcomeFromRecords([{ error: '', name: 'A' }, { name: 'B' }]).error).toBe('');
  });
});
