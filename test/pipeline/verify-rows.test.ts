import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { addressOfCell, canonicalAddress } from '../../src/pipeline/verify/address.js';
import type { AddressEntry } from '../../src/pipeline/verify/types.js';
import { verifiedRow } from '../../src/pipeline/verify/write-verified.js';

const row = (index: number, email: string): InputRow => ({
  index,
  line: index + 2,
  cells: [`${index}`, email],
});
const run = { column: 1, columnName: 'Email' };

describe('the address a cell holds (verify-emails)', () => {
  it('lowercases the domain and keeps the local part as written', () => {
    expect(canonicalAddress(' Jane.Doe@ACME.Com ')).toBe('Jane.Doe@acme.com');
    expect(canonicalAddress('"a@b"@Example.ORG')).toBe('"a@b"@example.org');
  });

  it('tells an empty cell from one that is not an address, by the shared email rule', () => {
    expect(addressOfCell('  ')).toEqual({ kind: 'empty' });
    expect(addressOfCell('mailto:a@b.com')).toMatchObject({ kind: 'bad' });
    expect(addressOfCell('user@localhost')).toMatchObject({ kind: 'bad', problem: /no dot/ });
    expect(addressOfCell('a@B.com')).toEqual({ kind: 'address', address: 'a@b.com' });
  });
});

describe('verifiedRow: one verdict fanned out to every row of its address', () => {
  const answer = { email: 'a@b.com', status: 'valid', credit_charged: true, remaining_credits: 9 };

  it('says what was charged on the row that was sent only; its duplicates say false', () => {
    const table = new Map<string, AddressEntry>([
      ['a@b.com', { first: 0, outcome: { kind: 'answered', answer, from: 'service', at: 0 } }],
    ]);
    const first = verifiedRow(row(0, 'a@b.com'), run, table);
    const dup = verifiedRow(row(3, 'a@B.COM'), run, table);
    expect([first.status, first.values, first.cachedAt]).toEqual([
      'enriched',
      ['valid', true],
      null,
    ]);
    expect([dup.status, dup.values]).toEqual(['enriched', ['valid', false]]);
  });

  it('a cached verdict was charged when looked up, not now: false, with when', () => {
    const at = Date.UTC(2026, 0, 2);
    const table = new Map<string, AddressEntry>([
      ['a@b.com', { first: 0, outcome: { kind: 'answered', answer, from: 'cache', at } }],
    ]);
    const r = verifiedRow(row(0, 'a@b.com'), run, table);
    expect([r.creditCharged, r.cachedAt]).toEqual([false, '2026-01-02T00:00:00.000Z']);
  });

  it('a lost answer is charge unknown on the sent row, nothing on its duplicates', () => {
    const table = new Map<string, AddressEntry>([
      ['a@b.com', { first: 0, outcome: { kind: 'failed', message: 'lost', charge: 'unknown' } }],
    ]);
    expect(verifiedRow(row(0, 'a@b.com'), run, table).creditCharged).toBe('unknown');
    expect(verifiedRow(row(1, 'a@b.com'), run, table).creditCharged).toBeNull();
  });

  it('rows without an address are invalid and never looked up', () => {
    const table = new Map<string, AddressEntry>();
    expect(verifiedRow(row(0, ''), run, table)).toMatchObject({
      status: 'invalid',
      error: 'no email address in column "Email"',
      values: ['', null],
    });
    expect(verifiedRow(row(1, 'foo'), run, table)).toMatchObject({
      status: 'invalid',
      values: ['invalid', null],
    });
  });
});
