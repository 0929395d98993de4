import { describe, expect, it } from 'vitest';
import { cacheLookup, NO_MATCH_MAX_AGE_MS } from '../../src/pipeline/run/cache-use.js';
import type { CachedAnswer } from '../../src/pipeline/types.js';

// How long the results cache's answers are used by a bulk run (cache-use.ts).

const DAY = 86_400_000;
const NOW = 100 * DAY;

function lookupOf(answers: Record<string, CachedAnswer>, maxAgeMs = 30 * DAY, read = true) {
  const cache = { get: (k: string) => answers[k], put: () => undefined };
  return cacheLookup(cache, { read, write: true, maxAgeMs }, () => NOW)!;
}

const match = { error: '', credit_charged: true, email: 'a@x.io' };
const noMatch = (charged: boolean) => ({ error: 'No match found', credit_charged: charged });

describe('cacheLookup: the age of an answer it uses', () => {
  it('a match for the max age; a free no-match for a week at most; a paid no-match like any paid answer (regression: re-bought after a week)', () => {
    const at = (days: number) => NOW - days * DAY;
    const lookup = lookupOf({
      match: { records: [match], at: at(29), charged: true },
      oldMatch: { records: [match], at: at(30), charged: true },
      free: { records: [noMatch(false)], at: at(6), charged: false },
      oldFree: { records: [noMatch(false)], at: at(7), charged: false },
      paid: { records: [noMatch(true)], at: at(29), charged: true },
      oldPaid: { records: [noMatch(true)], at: at(30), charged: true },
    });
    const used = (k: string) => lookup.fresh(k) !== undefined;
    expect(['match', 'oldMatch', 'free', 'oldFree', 'paid', 'oldPaid'].map(used)).toEqual([
      true,
      false,
      true,
      false,
      true,
      false,
    ]);
    expect(NO_MATCH_MAX_AGE_MS).toBe(7 * DAY);
    // A max age under a week holds for no-matches too; any answer stays there for `any`.
    const short = lookupOf({ free: { records: [noMatch(false)], at: at(2), charged: false } }, DAY);
    expect([short.fresh('free'), short.any('free')?.at]).toEqual([undefined, at(2)]);
  });

  it('reads nothing when the policy says not to (refresh), and nothing that is not there', () => {
    const answers = { k: { records: [match], at: NOW, charged: true } };
    expect(lookupOf(answers, 30 * DAY, false).fresh('k')).toBeUndefined();
    expect(lookupOf(answers).fresh('other')).toBeUndefined();
    expect(cacheLookup(undefined, { read: true, write: true, maxAgeMs: DAY }, () => NOW)).toBe(
      undefined,
    );
  });
});
