import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDeduper, hash64 } from '../../src/pipeline/run/dedupe.js';

describe('createDeduper', () => {
  it('returns the first index seen for a key, undefined for a new one', () => {
    const d = createDeduper();
    expect(d.check('a', 0)).toBeUndefined();
    expect(d.check('b', 1)).toBeUndefined();
    expect(d.check('a', 2)).toBe(0);
    expect(d.check('a', 3)).toBe(0);
    expect(d.size).toBe(2);
  });

  it('agrees with a Map on random keys, across table growth (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3000 }), (keys) => {
        const d = createDeduper(4);
        const ref = new Map<string, number>();
        keys.forEach((k, i) => {
          expect(d.check(k, i)).toBe(ref.get(k));
          if (!ref.has(k)) ref.set(k, i);
        });
        expect(d.size).toBe(ref.size);
      }),
      { numRuns: 40 },
    );
  });

  it('holds 300k distinct keys without a false duplicate', () => {
    const d = createDeduper();
    let dups = 0;
    for (let i = 0; i < 300_000; i++)
      if (d.check(`contacts\u0001business_email=user${i}@example.com`, i) !== undefined) dups++;
    expect(dups).toBe(0);
    expect(d.size).toBe(300_000);
  });

  it('hash64 spreads near-identical keys', () => {
    expect(hash64('a')).not.toEqual(hash64('b'));
    expect(hash64('ab')).not.toEqual(hash64('ba'));
  });
});
