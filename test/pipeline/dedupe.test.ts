import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDeduper, hash64 } from '../../src/pipeline/run/dedupe.js';
import { countBatches, createBatcher } from '../../src/pipeline/run/plan-batches.js';

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

describe('createBatcher', () => {
  it('hands out full batches as they fill, then the rest', () => {
    const b = createBatcher<number>(3);
    const out: number[][] = [];
    for (let i = 0; i < 7; i++) {
      const full = b.push(i);
      if (full) out.push(full);
    }
    const rest = b.flush();
    if (rest) out.push(rest);
    expect(out).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(b.flush()).toBeUndefined();
  });

  it('batches cover every item once, none larger than the size (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 500 }), (size, n) => {
        const b = createBatcher<number>(size);
        const batches: number[][] = [];
        for (let i = 0; i < n; i++) {
          const full = b.push(i);
          if (full) batches.push(full);
        }
        const rest = b.flush();
        if (rest) batches.push(rest);
        expect(batches.flat()).toEqual(Array.from({ length: n }, (_, i) => i));
        expect(batches.every((x) => x.length <= size && x.length > 0)).toBe(true);
        expect(batches.length).toBe(countBatches(n, size));
      }),
    );
  });

  it('refuses a size below 1', () => {
    expect(() => createBatcher(0)).toThrow(RangeError);
  });
});
