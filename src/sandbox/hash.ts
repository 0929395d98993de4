/** Cheap seeded hashing and pseudo-randomness: the synthetic data must be fast and deterministic. */

/** FNV-1a 32-bit hash of `text`, started from `seed` so a different seed gives different data. */
export function fnv1a(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ Math.imul(seed | 0, 0x9e3779b1)) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Murmur3's finaliser: spreads the bits of `h` mixed with `salt` (one derived value per salt). */
export function mix(h: number, salt: number): number {
  let x = (h ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Picks an element of `table` from hash `h` and `salt`. */
export function pick<T>(table: readonly T[], h: number, salt: number): T {
  return table[mix(h, salt) % table.length] as T;
}

/** An integer in [min, max] from hash `h` and `salt`. */
export function between(h: number, salt: number, min: number, max: number): number {
  return min + (mix(h, salt) % (max - min + 1));
}

/** Zero-padded decimal of `n` with `width` digits. */
export function digits(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** A seeded PRNG (mulberry32) returning floats in [0, 1): fault decisions and shuffles. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
