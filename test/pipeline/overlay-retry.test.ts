import { describe, expect, it } from 'vitest';
import { indexBatch, overlayRetry, ROW_FIELD } from '../../src/pipeline/join/join.js';

// A credit retry's answer laid over its batch's (join.ts overlayRetry): `custom_fields` is
// optional in bulk results, so either answer may join a row by its echo instead of its row id.

const keyOf = (f: Record<string, unknown>) => `k:${String(f.business_email)}`;
const rec = (email: string, o: { row?: number; data?: boolean } = {}) => ({
  error: o.data ? '' : 'No data returned: quota reached',
  credit_charged: o.data === true,
  ...(o.data ? { email } : {}),
  original_fields: { business_email: email },
  ...(o.row !== undefined ? { custom_fields: { [ROW_FIELD]: o.row } } : {}),
});
const index = (records: Record<string, unknown>[]) => indexBatch(records, () => true, keyOf);

describe('overlayRetry', () => {
  it('a short row joined by its row id is answered by a retry record joined by its echo, and the other way round (regression: "1 of 2 matches not returned")', () => {
    const lookup = index([rec('a@x.io', { row: 0 }), rec('b@x.io'), rec('c@x.io', { row: 2 })]);
    overlayRetry(
      lookup,
      index([rec('a@x.io', { data: true }), rec('b@x.io', { row: 1, data: true })]),
      keyOf,
    );
    expect([...lookup.byRow.keys()].sort()).toEqual([1, 2]);
    expect(lookup.byRow.get(1)?.[0]).toMatchObject({ email: 'b@x.io' });
    expect(lookup.byKey.get('k:a@x.io')).toEqual([rec('a@x.io', { data: true })]);
    expect(lookup.byKey.has('k:b@x.io')).toBe(false);
    // A row the retry did not send keeps its records.
    expect(lookup.byRow.get(2)).toEqual([rec('c@x.io', { row: 2 })]);
  });

  it('records of a twin request that got an answer stay (--no-dedupe)', () => {
    const twinAnswered = { ...rec('a@x.io', { data: true }) };
    const lookup = index([twinAnswered, rec('a@x.io'), rec('a@x.io', { row: 4, data: true })]);
    const again = rec('a@x.io', { data: true });
    overlayRetry(lookup, index([again]), keyOf);
    expect(lookup.byKey.get('k:a@x.io')).toEqual([twinAnswered, again]);
    expect(lookup.byRow.get(4)).toEqual([rec('a@x.io', { row: 4, data: true })]);
    // A row with a match beside a record that ran short (a company's --top) was not sent again.
    const partial = index([rec('b@x.io', { row: 6, data: true }), rec('b@x.io', { row: 6 })]);
    overlayRetry(partial, index([rec('b@x.io', { data: true })]), keyOf);
    expect(partial.byRow.get(6)).toHaveLength(2);
  });
});
