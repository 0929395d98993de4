import type { CachedAnswer } from '../types.js';

/** Row ranges (inclusive) of cache hits: each range covers hits only, up to non-hit rows sent. */
export type HitRanges = [number, number][];

/** Cache hits an earlier attempt of this run journaled (rows up to `upTo` were decided then). */
export interface JournaledHits {
  upTo: number;
  ranges: readonly (readonly [number, number])[];
}

/** What the classification needs to answer rows from the cache. */
export interface CacheLookup {
  /** A fresh enough answer for a request key (undefined: send it). */
  fresh(key: string): CachedAnswer | undefined;
  /** The cached answer whatever its age (for rows an earlier attempt of the run took from the cache). */
  any(key: string): CachedAnswer | undefined;
  journaled?: JournaledHits;
}

/**
 * Decides, row by row in input order, which valid rows come from the cache, and keeps the
 * decisions in ranges for the journal. A resumed run must rebuild its batches exactly as
 * journaled, so rows an earlier attempt decided are decided the same way (from the journal),
 * however the cache changed since (this run's own answers went into it meanwhile).
 */
export function createHitTracker(source: CacheLookup | undefined) {
  const journaled = source?.journaled ?? { upTo: -1, ranges: [] };
  let at = 0;
  let open: [number, number] | undefined;
  let ranges: HitRanges = [];
  let upTo = journaled.upTo;
  const wasHit = (index: number): boolean => {
    const r = journaled.ranges;
    while (at < r.length && (r[at] as readonly [number, number])[1] < index) at++;
    return at < r.length && (r[at] as readonly [number, number])[0] <= index;
  };
  /** The cache's answer for a valid first-occurrence row (nothing noted: see `note`). */
  const lookup = (
    index: number,
    key: string,
  ): { hit: false } | { hit: true; answer?: CachedAnswer } => {
    if (!source) return { hit: false };
    if (index <= journaled.upTo)
      return wasHit(index) ? { hit: true, answer: source.any(key) } : { hit: false };
    const answer = source.fresh(key);
    return answer ? { hit: true, answer } : { hit: false };
  };
  /** Notes the decision of a row after those noted before (rows an earlier attempt decided are not). */
  const note = (index: number, hit: boolean): void => {
    if (!source || index <= journaled.upTo) return;
    if (!hit) {
      if (open) ranges.push(open);
      open = undefined;
    } else if (open) open[1] = index;
    else open = [index, index];
  };
  return {
    lookup,
    note,
    /** True for rows an earlier attempt of the run decided (their decisions come from its journal). */
    decided: (index: number): boolean => index <= journaled.upTo,
    /** The cache's answer for a valid first-occurrence row: a hit (with its answer, if still there) or a miss. */
    check(index: number, key: string): { hit: false } | { hit: true; answer?: CachedAnswer } {
      const found = lookup(index, key);
      note(index, found.hit);
      return found;
    },
    /** The decisions since the last call, for the journal, once rows up to `index` are classified. */
    span(index: number): { upTo: number; ranges: HitRanges } | undefined {
      if (!source || index <= upTo) return undefined;
      if (open) ranges.push(open);
      open = undefined;
      const out = { upTo: index, ranges };
      ranges = [];
      upTo = index;
      return out;
    },
  };
}
