import { describe, expect, it } from 'vitest';
import {
  cacheLookup,
  creditsSaved,
  echoedItems,
  fillCache,
  isNoMatch,
  marked,
  markUnconfirmed,
  NO_MATCH_MAX_AGE_MS,
  withoutMarks,
} from '../../src/pipeline/run/cache-use.js';
import type { CachedAnswer, ResultsCache } from '../../src/pipeline/types.js';

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

/**
 * A request sent again (its answer too old for that run) whose answer never came: the mark goes
 * over the old answer (regression: marks were written only where the cache held nothing, so the
 * next run with the same max age sent that request again and the account paid twice).
 */
describe('a mark over an older answer', () => {
  const at = (days: number) => NOW - days * DAY;
  const memory = (entries: Record<string, CachedAnswer>) => {
    const map = new Map(Object.entries(entries));
    const cache: ResultsCache = { get: (k) => map.get(k), put: (k, a) => void map.set(k, a) };
    return { map, cache };
  };

  it('is written over an answer older than the request, never over a newer one or a newer mark', () => {
    const old = { records: [match], at: at(40), charged: true };
    const newer = { records: [match], at: at(1), charged: true };
    const mark = { records: [], at: at(3), charged: false, unconfirmed: true };
    const { map, cache } = memory({ old, newer, mark });
    markUnconfirmed(
      cache,
      [{ key: 'old' }, { key: 'newer' }, { key: 'mark' }, { key: 'none' }],
      at(2),
    );
    expect(map.get('old')).toEqual({ ...old, unansweredAt: at(2) });
    expect(map.get('newer')).toBe(newer);
    expect(map.get('mark')).toEqual({ ...mark, at: at(2) }); // the mark of the later loss
    expect(map.get('none')).toEqual({ records: [], at: at(2), charged: false, unconfirmed: true });
    // A later loss of the same request moves the mark on (it lasts a max age from then); an
    // earlier one (a dead run's, settled late) leaves it.
    markUnconfirmed(cache, [{ key: 'old' }, { key: 'mark' }], at(1));
    expect(map.get('old')).toEqual({ ...old, unansweredAt: at(1) });
    expect(map.get('mark')).toEqual({ ...mark, at: at(1) });
    markUnconfirmed(cache, [{ key: 'old' }, { key: 'mark' }], at(5));
    expect(map.get('old')).toEqual({ ...old, unansweredAt: at(1) });
    expect(map.get('mark')).toEqual({ ...mark, at: at(1) });
  });

  it('is read as the answer while the answer is fresh for the run, then as the mark while that is fresh, then as nothing', () => {
    const marked = (answerDays: number, markDays: number): CachedAnswer => ({
      records: [match],
      at: at(answerDays),
      charged: true,
      unansweredAt: at(markDays),
    });
    const lookup = lookupOf({ fresh: marked(10, 2), stale: marked(40, 2), gone: marked(70, 31) });
    // Fresh: the answer alone (written as a hit, its credits saved).
    expect(lookup.fresh('fresh')).toEqual({ records: [match], at: at(10), charged: true });
    expect(lookup.any('fresh')).toEqual({ records: [match], at: at(10), charged: true });
    // Too old for this run: the mark, as if the cache held nothing else (not sent again).
    const mark = { records: [], at: at(2), charged: false, unconfirmed: true };
    expect(lookup.fresh('stale')).toEqual(mark);
    expect(lookup.any('stale')).toEqual(mark);
    // Both too old: sent again, as an answer or a mark alone would be.
    expect(lookup.fresh('gone')).toBeUndefined();
    // A mark alone lasts the whole max age (not a no-match's week), and not a moment more.
    const alone = (days: number) => ({
      records: [],
      at: at(days),
      charged: false,
      unconfirmed: true,
    });
    const marks = lookupOf({ ten: alone(10), edge: alone(30) });
    expect(marks.fresh('ten')).toEqual(alone(10));
    expect(marks.fresh('edge')).toBeUndefined();
    // A run with a longer max age still takes the answer.
    expect(lookupOf({ stale: marked(40, 2) }, 60 * DAY).fresh('stale')?.at).toBe(at(40));
    // A free no-match is fresh for a week only: past it, the mark.
    const free = { records: [noMatch(false)], at: at(8), charged: false, unansweredAt: at(1) };
    expect(lookupOf({ free }).fresh('free')).toMatchObject({ unconfirmed: true, at: at(1) });
  });

  it('an answer as new as the lost request is left unmarked', () => {
    const answer = { records: [match], at: at(2), charged: true };
    expect(marked(answer, at(2))).toBeUndefined();
    expect(marked(answer, at(2) + 1)).toEqual({ ...answer, unansweredAt: at(2) + 1 });
  });

  it('--resend-unconfirmed reads the answer alone (and sends it when it is too old)', () => {
    const { cache } = memory({
      stale: { records: [match], at: at(40), charged: true, unansweredAt: at(2) },
      mark: { records: [], at: at(2), charged: false, unconfirmed: true },
    });
    const plain = { records: [match], at: at(1), charged: true };
    cache.put('plain', plain);
    const view = withoutMarks(cache);
    expect(view.get('stale')).toEqual({ records: [match], at: at(40), charged: true });
    expect(view.get('mark')).toBeUndefined();
    expect(view.get('plain')).toBe(plain);
    expect(view.get('missing')).toBeUndefined();
    const lookup = cacheLookup(view, { read: true, write: true, maxAgeMs: 30 * DAY }, () => NOW)!;
    expect(lookup.fresh('stale')).toBeUndefined();
  });
});

describe('what an answer is and what it saved', () => {
  it('isNoMatch: no record without an error (blank errors are none); no records at all', () => {
    const of = (...records: Record<string, unknown>[]) =>
      isNoMatch({ records, at: 0, charged: false });
    expect(of(noMatch(false))).toBe(true);
    expect(of()).toBe(true);
    expect(of(match)).toBe(false);
    expect(of({ error: '   ', email: 'a@x.io' })).toBe(false);
    expect(of({ email: 'a@x.io' })).toBe(false); // no error field: a match
    expect(of({ error: 7 })).toBe(false); // not a text: no error the service said
    expect(of(noMatch(false), match)).toBe(false);
    expect(of(noMatch(false), noMatch(true))).toBe(true);
  });

  it('creditsSaved: the records the service charged for then; nothing for a mark or no answer', () => {
    const records = [match, { ...match, credit_charged: false }, { ...match }];
    expect(creditsSaved({ records, at: 0, charged: true })).toBe(2);
    expect(creditsSaved(undefined)).toBe(0);
    expect(creditsSaved({ records: [match], at: 0, charged: false, unconfirmed: true })).toBe(0);
  });
});

describe('fillCache: what a batch leaves in the cache', () => {
  const rec = (row: number, r: Record<string, unknown>) => ({
    ...r,
    custom_fields: { enrich_row: row },
    original_fields: { business_email: `p${row}@x.io` },
  });

  it('keeps each answered row without its echoes, charged when any record was; leaves rows with no records, or out of credits', () => {
    const map = new Map<string, CachedAnswer>();
    const cache: ResultsCache = { get: (k) => map.get(k), put: (k, a) => void map.set(k, a) };
    const dry = { error: 'Insufficient credits', credit_charged: false };
    const free = { ...match, credit_charged: false, first_name: 'Ann' }; // data, not charged
    const kept = fillCache(
      cache,
      'contacts',
      [
        { index: 0, key: 'k0' },
        { index: 1, key: 'k1' },
        { index: 2, key: 'k2' },
        { index: 3, key: 'k3' },
      ],
      {
        records: [rec(0, match), rec(0, free), rec(1, free), rec(2, match), rec(2, dry)],
        remaining: 0,
        at: 42,
      },
    );
    expect(kept).toBe(2);
    expect(map.get('k0')).toEqual({
      records: [match, free],
      at: 42,
      charged: true,
    });
    expect(map.get('k1')).toEqual({
      records: [free],
      at: 42,
      charged: false,
    });
    expect(map.has('k2')).toBe(false); // one of its records ran out of credits
    expect(map.has('k3')).toBe(false); // no record answered it
  });

  it('a row answered by echo alone (no row ids) keeps its records in the order the service gave', () => {
    const map = new Map<string, CachedAnswer>();
    const cache: ResultsCache = { get: (k) => map.get(k), put: (k, a) => void map.set(k, a) };
    const sent = { business_email: 'q@x.io' };
    const [item] = echoedItems('contacts', [{ original_fields: sent }]);
    const first = { ...noMatch(false), original_fields: sent };
    const second = { ...match, original_fields: sent };
    fillCache(cache, 'contacts', [{ index: 0, key: item!.key }], {
      records: [first, second],
      remaining: 10,
      at: 1,
    });
    expect(map.get(item!.key)?.records).toEqual([noMatch(false), match]);
  });

  it('echoedItems: a record’s key from what it echoes, its row id, or a negative index of its own', () => {
    const noId = { ...match, original_fields: { business_email: 'q@x.io' } };
    const items = echoedItems('contacts', [rec(5, match), noId, noId, { ...match }]);
    expect(items.map((i) => i.index)).toEqual([5, -2, -3]);
    expect(items[1]!.key).toBe(items[2]!.key);
    expect(items[0]!.key).not.toBe(items[1]!.key);
  });
});
