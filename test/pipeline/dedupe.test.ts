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

describe('createDeduper: what a mutant of it would cost (issue 21)', () => {
  // Keys from a small alphabet repeat often, so every key, including the one added when the
  // table grows, is asked again: a lost key would be sent (and paid) again.
  it('never forgets a key, including the one added at each table growth (fast-check, repeating keys)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 5 }), {
          minLength: 1,
          maxLength: 1500,
        }),
        fc.constantFrom(1, 2, 4, 8),
        (keys, initial) => {
          const d = createDeduper(initial);
          const ref = new Map<string, number>();
          keys.forEach((k, i) => {
            expect(d.check(k, i)).toBe(ref.get(k));
            if (!ref.has(k)) ref.set(k, i);
          });
          expect(d.size).toBe(ref.size);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('remembers the key that filled the table to half when it grew (keys 0..n each asked again)', () => {
    for (const initial of [1, 2, 4, 16]) {
      const d = createDeduper(initial);
      const n = initial * 8;
      for (let i = 0; i < n; i++) expect(d.check(`k${i}`, i)).toBeUndefined();
      for (let i = 0; i < n; i++) expect(d.check(`k${i}`, n + i)).toBe(i);
      expect(d.size).toBe(n);
    }
  });

  // Pairs of keys that share one 32-bit half of their hash (found by search) and land in the
  // same slot of a 4-slot table: a deduper comparing either half alone (`||` for `&&`) would
  // call the second key a duplicate of the first, and its row would never be sent.
  it.each([
    ['the high half', 'row1665', 'row245383'],
    ['the high half', 'row237196', 'row271199'],
    ['the low half', 'row42322', 'row55614'],
    ['the low half', 'row311679', 'row325116'],
  ])('takes two keys sharing only %s of their hash as different rows (%s, %s)', (half, a, b) => {
    const [ha, hb] = [hash64(a), hash64(b)];
    const same = half === 'the high half' ? 0 : 1;
    expect(ha[same]).toBe(hb[same]);
    expect(ha[1 - same]).not.toBe(hb[1 - same]);
    expect((ha[0] ^ ha[1]) & 3).toBe((hb[0] ^ hb[1]) & 3);
    const d = createDeduper(1); // 2 slots, 4 once the first key is in: both keys probe one slot
    expect(d.check(a, 0)).toBeUndefined();
    expect(d.check(b, 1)).toBeUndefined();
    expect(d.check(b, 2)).toBe(1);
    expect(d.size).toBe(2);
  });
});
