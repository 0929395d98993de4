/**
 * Remembers which normalised inputs were seen, for 1M+ rows in little memory: each
 * key is stored as a 64-bit hash (two 32-bit halves) instead of the key string itself.
 * The hashes and first row indexes sit densely in insertion order (12 bytes a key); an
 * open-addressing table of ordinals (4 bytes a slot, at most half full) finds them. A
 * million keys take about 21 MB (25 MB with the hashes in the slots themselves), and
 * growing the table needs no copy of it: it is rebuilt from the dense arrays. Two
 * different keys collide with probability about n^2 / 2^65 (3e-8 for a million rows).
 */
export interface Deduper {
  /** The first row index seen with this key, or undefined (and then this index is remembered). */
  check(key: string, index: number): number | undefined;
  readonly size: number;
}

/** Creates an empty deduper. */
export function createDeduper(initialCapacity = 1024): Deduper {
  let capacity = 1;
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: the starting size only sets when the table first grows
  while (capacity < initialCapacity * 2) capacity *= 2;
  let slots = new Int32Array(capacity); // ordinal + 1; 0 is an empty slot
  let hi = new Uint32Array(capacity / 2);
  let lo = new Uint32Array(capacity / 2);
  let rows = new Int32Array(capacity / 2);
  let size = 0;

  /** The slot holding (h, l), or the empty slot where it belongs. */
  const find = (h: number, l: number): number => {
    const mask = capacity - 1;
    let slot = (l ^ h) & mask;
    for (let o = slots[slot]!; o !== 0; o = slots[slot]!) {
      if (hi[o - 1] === h && lo[o - 1] === l) return slot;
      // Stryker disable next-line ArithmeticOperator: probing downwards (-1 & mask wraps) finds the same keys
      slot = (slot + 1) & mask;
    }
    return slot;
  };

  const grow = () => {
    capacity *= 2;
    slots = new Int32Array(capacity);
    // Stryker disable next-line EqualityOperator: `<=` adds a slot for the hash (0, 0) of no key, never matched
    for (let o = 0; o < size; o++) slots[find(hi[o]!, lo[o]!)] = o + 1;
    const more = <T extends Uint32Array | Int32Array>(a: T, make: (n: number) => T): T => {
      // Stryker disable next-line ArithmeticOperator: larger arrays cost memory, not correctness
      const b = make(capacity / 2);
      b.set(a);
      return b;
    };
    hi = more(hi, (n) => new Uint32Array(n));
    lo = more(lo, (n) => new Uint32Array(n));
    rows = more(rows, (n) => new Int32Array(n));
  };

  return {
    check(key, index) {
      const [h, l] = hash64(key);
      const slot = find(h, l);
      const o = slots[slot]!;
      if (o !== 0) return rows[o - 1];
      hi[size] = h;
      lo[size] = l;
      rows[size] = index;
      slots[slot] = ++size;
      if (size * 2 >= capacity) grow();
      return undefined;
    },
    get size() {
      return size;
    },
  };
}

/** A fast, well-mixed 64-bit string hash (cyrb53's mixing, both 32-bit halves kept). */
export function hash64(key: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < key.length; i++) {
    const ch = key.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}
