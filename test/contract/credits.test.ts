import { describe, expect, it } from 'vitest';
import { hasNoData, isCreditExhausted } from '../../src/contract/credits.js';

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
