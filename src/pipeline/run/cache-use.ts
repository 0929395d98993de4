import { copyWith } from '../../copy-with.js';
import { isCreditExhausted } from '../../contract/credits.js';
import {
  indexBatch,
  noRecords,
  originalFieldsOf,
  outcomeFromRecords,
  rowIdOf,
  sharesOf,
} from '../join/join.js';
import type { RowOutcome } from '../join/join.js';
import { keyOfFields } from '../mapping/validate.js';
import type {
  BulkKind,
  CachedAnswer,
  CachePolicy,
  ResultsCache,
  RunWords,
  SentItem,
} from '../types.js';
import { unconfirmedEarlier } from './messages.js';
import type { CacheLookup, JournaledHits } from './cache-hits.js';

type AnyRecord = Record<string, unknown>;

/**
 * How long a "no match" answer the service did not charge for is used: a week, whatever the
 * max age. The service learns of new people and companies all the time, and asking again
 * costs nothing while there is still no match, while a match found is worth paying for; a
 * week still spares the requests of nightly and weekly re-runs. api-spec.md never says a
 * record without a match is free: one the service charged for (`credit_charged`) is kept for
 * the whole max age, like any answer paid for.
 */
export const NO_MATCH_MAX_AGE_MS = 7 * 86_400_000;

/** True when the answer has no record without an error (no match, or the service said why not). */
export function isNoMatch(answer: CachedAnswer): boolean {
  return !answer.records.some((r) => typeof r.error !== 'string' || r.error.trim() === '');
}

/** How long an answer is used: the max age, or a week for a no-match that cost nothing. */
export function maxAgeOf(maxAgeMs: number, answer: { noMatch: boolean; charged: boolean }) {
  return answer.noMatch && !answer.charged ? Math.min(maxAgeMs, NO_MATCH_MAX_AGE_MS) : maxAgeMs;
}

/** The lookup the classification uses, from the cache, the run's policy and the clock. */
export function cacheLookup(
  cache: ResultsCache | undefined,
  policy: CachePolicy,
  now: () => number,
  journaled?: JournaledHits,
): CacheLookup | undefined {
  if (!cache) return undefined;
  const started = now();
  const answerFresh = (a: CachedAnswer) =>
    started - a.at < maxAgeOf(policy.maxAgeMs, { noMatch: isNoMatch(a), charged: a.charged });
  return {
    fresh(key) {
      if (!policy.read) return undefined;
      const a = asRead(cache.get(key), answerFresh);
      if (!a) return undefined;
      // A request sent without an answer is marked for the whole max age.
      if (a.unconfirmed) return started - a.at < policy.maxAgeMs ? a : undefined;
      return answerFresh(a) ? a : undefined;
    },
    any: (key) => asRead(cache.get(key), answerFresh),
    ...(journaled ? { journaled } : {}),
  };
}

/**
 * An entry as a run reads it: a mark over an older answer (a run sent the request again and its
 * answer never came) is that answer while `fresh` says it is, and the mark after that; any other
 * entry as it is. So a run that would take the answer still does, and one that would send the
 * request again does not.
 */
export function asRead(
  a: CachedAnswer | undefined,
  fresh: (answer: CachedAnswer) => boolean,
): CachedAnswer | undefined {
  if (a?.unansweredAt === undefined) return a;
  const { unansweredAt, ...answer } = a;
  return fresh(answer)
    ? answer
    : { records: [], at: unansweredAt, charged: false, unconfirmed: true };
}

/**
 * What an entry becomes once its request is marked sent without an answer at `at`: a mark
 * where it holds nothing or an earlier mark (a mark lasts a max age from the last loss), a mark
 * over an answer older than the request (which a run takes while it is fresh for it: `asRead`);
 * undefined where it stays as it is (an answer as new as the request, another run's or a
 * `--refresh` run's that came first, or a mark as new).
 */
export function marked(a: CachedAnswer | undefined, at: number): CachedAnswer | undefined {
  const mark = { records: [], at, charged: false, unconfirmed: true };
  if (!a) return mark;
  // Stryker disable next-line EqualityOperator: a mark of the same time put again is the same mark
  if (a.unconfirmed) return a.at < at ? mark : undefined;
  // Stryker disable next-line EqualityOperator: (likewise, over an answer)
  if (a.at >= at || (a.unansweredAt ?? -Infinity) >= at) return undefined;
  return { ...a, unansweredAt: at };
}

/**
 * The outcome of a row answered from the cache: as the answer says, nothing charged now. A
 * mark of a request another run sent without an answer: `failed`, not sent.
 */
export function cachedOutcome(
  answer: CachedAnswer | undefined,
  gone: string,
  words: RunWords,
): RowOutcome<AnyRecord> {
  if (!answer) return noRecords('failed', gone);
  if (answer.unconfirmed) return noRecords('failed', unconfirmedEarlier(words, answer.at));
  return copyWith(outcomeFromRecords(answer.records), {
    creditCharged: false,
    cachedAt: answer.at,
  });
}

/**
 * Marks the requests of a batch whose POST got no answer (it may have been charged), so that
 * no run sends them again by itself: another file's run that holds the same rows writes them
 * `failed` unless it is asked to send them again (`--resend-unconfirmed`), as a resume of the
 * same run does. An answer the cache holds is kept (`marked`): a run takes it while it is
 * fresh for that run (a `--refresh` run's lost answer leaves others the one they had).
 */
export function markUnconfirmed(
  cache: ResultsCache,
  items: readonly { key: string }[],
  at: number,
): void {
  for (const { key } of items) {
    const mark = marked(cache.get(key), at);
    if (mark) cache.put(key, mark);
  }
}

/**
 * The cache as a run asked to send unconfirmed requests again sees it: their marks are misses,
 * and an answer under a mark is the answer alone.
 */
export function withoutMarks(cache: ResultsCache): ResultsCache {
  // Everything else as the cache has it (its other methods, whatever object it is).
  const view = Object.create(cache) as ResultsCache;
  view.get = (key) => {
    const a = cache.get(key);
    if (a?.unconfirmed) return undefined;
    if (a?.unansweredAt === undefined) return a;
    const { unansweredAt: _, ...answer } = a;
    return answer;
  };
  return view;
}

/** The credits a cached answer spared: what the service charged for it then. */
export function creditsSaved(answer: CachedAnswer | undefined): number {
  return answer && !answer.unconfirmed
    ? answer.records.filter((r) => r.credit_charged === true).length
    : 0;
}

/**
 * Keeps a batch's answers in the cache, by each row's request key. Answers the service may
 * give differently next time are left out: a row whose records ran out of credits, and rows
 * the results do not answer (missing: pushed to `missing` when given, for the caller to mark).
 * Records are kept without their echoes of this run's request (`custom_fields`: its row ids;
 * `original_fields`: the fields it sent): a row answered from the cache sent nothing, and the
 * echoes were a quarter of each entry.
 */
export function fillCache(
  cache: ResultsCache,
  kind: BulkKind,
  items: readonly SentItem[],
  answer: { records: readonly AnyRecord[]; remaining: number | null; at: number },
  missing?: SentItem[],
): number {
  const lookup = indexBatch(
    answer.records,
    () => true,
    (f) => keyOfFields(kind, f),
  );
  // Rows that sent one key and came back without row ids (identical requests, --no-dedupe):
  // the key's echoed records answer all of them, and the cache keeps one request's share, as
  // the join shares them out (shareEchoed).
  const twins = new Map<string, number[]>();
  for (const item of items) {
    if (lookup.byRow.has(item.index)) continue;
    const rows = twins.get(item.key);
    if (rows) rows.push(item.index);
    else twins.set(item.key, [item.index]);
  }
  let kept = 0;
  for (const item of items) {
    const rows = twins.get(item.key);
    const records =
      lookup.byRow.get(item.index) ??
      (rows && rows.length > 1
        ? sharesOf(lookup, item.key, rows).get(item.index)
        : lookup.byKey.get(item.key));
    // Stryker disable next-line ConditionalExpression: no lookup hands out an empty list (each is made by its first record)
    if (!records || records.length === 0) {
      missing?.push(item);
      continue;
    }
    if (records.some((r) => isCreditExhausted(r, answer.remaining))) continue;
    cache.put(item.key, {
      records: records.map(withoutEchoes),
      at: answer.at,
      charged: records.some((r) => r.credit_charged === true),
    });
    kept++;
  }
  return kept;
}

/**
 * The items of an answer read outside its run (`enrich jobs fetch`, an earlier run's job):
 * each record's request key from its echo of what was sent (`original_fields`), and its row
 * id when it has one, for fillCache.
 */
export function echoedItems(kind: BulkKind, records: readonly AnyRecord[]): SentItem[] {
  return records.flatMap((r, i) => {
    const element = originalFieldsOf(r);
    return element ? [{ index: rowIdOf(r) ?? -1 - i, key: keyOfFields(kind, element) }] : [];
  });
}

function withoutEchoes(r: AnyRecord): AnyRecord {
  const { custom_fields: _rowIds, original_fields: _sent, ...rest } = r;
  return rest;
}
