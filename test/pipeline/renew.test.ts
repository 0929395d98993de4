import { describe, expect, it } from 'vitest';
import { startsAfresh } from '../../src/pipeline/journal/renew.js';

const DAY = 86_400_000;
const header = { at: 0 } as Parameters<typeof startsAfresh>[0]['header'];
const found = (exit?: number) => ({
  header,
  done: { at: 1, output: 'o.csv', ...(exit !== undefined ? { exit } : {}) },
});
const policy = { read: true, write: true, maxAgeMs: 30 * DAY };

describe('startsAfresh: which run found in the journal is started over, not resumed', () => {
  it('a finished run (exit 0) under refresh, or once as old as the max age (0: always)', () => {
    const refresh = { ...policy, read: false };
    expect(startsAfresh(found(0), refresh, { now: 1, cache: true })).toBe(true);
    // --refresh wants new answers whether or not a cache could be opened.
    expect(startsAfresh(found(0), refresh, { now: 1, cache: false })).toBe(true);
    expect(startsAfresh(found(0), policy, { now: 30 * DAY - 1, cache: true })).toBe(false);
    expect(startsAfresh(found(0), policy, { now: 30 * DAY, cache: true })).toBe(true);
    expect(startsAfresh(found(0), { ...policy, maxAgeMs: 0 }, { now: 0, cache: true })).toBe(true);
  });

  it('never a run a resume would still send or download for, an earlier build’s, or one kept without a cache', () => {
    const old = { now: 90 * DAY, cache: true };
    const refresh = { ...policy, read: false };
    for (const exit of [3, 5, 130]) expect(startsAfresh(found(exit), refresh, old)).toBe(false);
    expect(startsAfresh(found(), refresh, old)).toBe(false); // no exit code: an earlier build's
    expect(startsAfresh({ header }, refresh, old)).toBe(false); // no output yet
    // --no-cache: its journal is the only copy of what was paid for.
    expect(startsAfresh(found(0), { ...policy, read: false, write: false }, old)).toBe(false);
    // A cache that could not be opened: the max age has nothing younger to offer.
    expect(startsAfresh(found(0), policy, { now: 90 * DAY, cache: false })).toBe(false);
  });
});
