import { describe, expect, it } from 'vitest';
import { hasNoData, isCreditExhausted, readCredits } from '../../src/contract/credits.js';

describe('isCreditExhausted', () => {
  const bare = { error: 'anything at all', credit_charged: false, custom_fields: { row: 1 } };

  it('is true for a record not charged, without data, when fewer credits remain than one costs', () => {
    expect(isCreditExhausted(bare, 0, 1)).toBe(true);
    expect(isCreditExhausted({ ...bare, error: '' }, 0.5, 1)).toBe(true);
    expect(isCreditExhausted({ ...bare, email: null, location: { country: '' } }, 0, 1)).toBe(true);
  });

  it('whatever the wording, and never from wording alone', () => {
    expect(isCreditExhausted({ ...bare, error: 'Out of credits' }, 10, 1)).toBe(false);
    expect(isCreditExhausted({ ...bare, error: 'Quota reached' }, 0, 1)).toBe(true);
  });

  it('is false for a charged record, a record with data, or an unknown balance', () => {
    expect(isCreditExhausted({ ...bare, credit_charged: true }, 0, 1)).toBe(false);
    expect(isCreditExhausted({ ...bare, title: 'CEO' }, 0, 1)).toBe(false);
    expect(isCreditExhausted(bare, undefined, 1)).toBe(false);
    expect(isCreditExhausted(bare, null, 1)).toBe(false);
    expect(isCreditExhausted(bare, Number.NaN, 1)).toBe(false);
    expect(isCreditExhausted(bare, 1, 1)).toBe(false);
  });

  it('hasNoData ignores the error, the credit flag and the echoed fields', () => {
    expect(hasNoData({ error: 'x', original_fields: { a: 1 }, custom_fields: { b: 2 } })).toBe(
      true,
    );
    expect(hasNoData({ company: { name: 'Acme' } })).toBe(false);
  });
});

// F1: a results answer's `remaining_credits` is the balance when it was downloaded.
describe('readCredits', () => {
  const paid = { error: '', credit_charged: true, email: 'a@x.io' };
  const none = { error: 'Nothing found for this input', credit_charged: false };

  it('an answer showing the account dry is dry, whatever else (never unsure)', () => {
    expect(readCredits([paid, none], 0, false)).toEqual({ dry: true, unsure: false });
    expect(readCredits([none], 0, true)).toEqual({ dry: true, unsure: false });
  });

  it('a record not charged and without data, read with a balance not seen to hold, is unsure', () => {
    expect(readCredits([paid, none], 1000, false)).toEqual({ dry: false, unsure: true });
    // Whatever the wording: an empty error too.
    expect(readCredits([{ ...none, error: '' }], 7, false)).toEqual({ dry: false, unsure: true });
  });

  it('with a balance that held while the job ran, such a record is a no-match: neither', () => {
    expect(readCredits([paid, none], 1000, true)).toEqual({ dry: false, unsure: false });
  });

  it('an answer whose every record was charged or has data is neither, held or not', () => {
    const charged = { ...none, credit_charged: true };
    const data = { ...none, title: 'CEO' };
    expect(readCredits([paid, charged, data], 1000, false)).toEqual({ dry: false, unsure: false });
    expect(readCredits([], 1000, false)).toEqual({ dry: false, unsure: false });
  });

  it('weighs one record against costPerRecord', () => {
    expect(readCredits([none], 2, false, 3)).toEqual({ dry: true, unsure: false });
    expect(readCredits([none], 3, false, 3)).toEqual({ dry: false, unsure: true });
  });
});
