/**
 * Remembers which normalised inputs were seen, for 1M+ rows in little memory: each
 * key is stored as a 64-bit hash (two 32-bit halves) in an open-addressing table of
 * typed arrays, 12 bytes a slot, instead of the key string itself. Two different
 * keys collide with probability about n^2 / 2^65 (3e-8 for a million rows).
 */
export interface Deduper {
  /** The first row index seen with this key, or undefined (and then this index is remembered). */
  check(key: string, index: number): number | undefined;
  readonly size: number;
}

/** Creates an empty deduper. */
export function createDeduper(initialCapacity = 1024): Deduper {
  let capacity = 1;
  while (capacity < initialCapacity * 2) capacity *= 2;
  let hi = new Uint32Array(capacity);
  let lo = new Uint32Array(capacity);
  let rows = new Int32Array(capacity).fill(-1);
  let size = 0;

  const find = (h: number, l: number): number => {
    let slot = (l ^ h) & (capacity - 1);
    while (rows[slot] !== -1 && (hi[slot] !== h || lo[slot] !== l))
      slot = (slot + 1) & (capacity - 1);
    return slot;
  };

  const grow = () => {
    const [oldHi, oldLo, oldRows] = [hi, lo, rows];
    capacity *= 2;
    hi = new Uint32Array(capacity);
    lo = new Uint32Array(capacity);
    rows = new Int32Array(capacity).fill(-1);
    for (let i = 0; i < oldRows.length; i++) {
      if (oldRows[i] === -1) continue;
      const slot = find(oldHi[i]!, oldLo[i]!);
      hi[slot] = oldHi[i]!;
      lo[slot] = oldLo[i]!;
      rows[slot] = oldRows[i]!;
    }
  };

  return {
    check(key, index) {
      const [h, l] = hash64(key);
      const slot = find(h, l);
      if (rows[slot] !== -1) return rows[slot];
      hi[slot] = h;
      lo[slot] = l;
      rows[slot] = index;
      size++;
      if (size * 2 > capacity) grow();
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
