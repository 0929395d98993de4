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
  return {
    fresh(key) {
      if (!policy.read) return undefined;
      const a = cache.get(key);
      if (!a) return undefined;
      // A request sent without an answer is marked for the whole max age.
      if (a.unconfirmed) return started - a.at < policy.maxAgeMs ? a : undefined;
      const maxAge = maxAgeOf(policy.maxAgeMs, { noMatch: isNoMatch(a), charged: a.charged });
      return started - a.at < maxAge ? a : undefined;
    },
    any: (key) => cache.get(key),
    ...(journaled ? { journaled } : {}),
  };
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
 * same run does. A request the cache holds an answer to keeps it (a `--refresh` run's).
 */
export function markUnconfirmed(
  cache: ResultsCache,
  items: readonly { key: string }[],
  at: number,
): void {
  for (const { key } of items)
    if (!cache.get(key)) cache.put(key, { records: [], at, charged: false, unconfirmed: true });
}

/** The cache as a run asked to send unconfirmed requests again sees it: their marks are misses. */
export function withoutMarks(cache: ResultsCache): ResultsCache {
  // Everything else as the cache has it (its other methods, whatever object it is).
  const view = Object.create(cache) as ResultsCache;
  view.get = (key) => {
    const a = cache.get(key);
    return a?.unconfirmed ? undefined : a;
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
 * the results do not answer (missing). Records are kept without their echoes of this run's
 * request (`custom_fields`: its row ids; `original_fields`: the fields it sent): a row
 * answered from the cache sent nothing, and the echoes were a quarter of each entry.
 */
export function fillCache(
  cache: ResultsCache,
  kind: BulkKind,
  items: readonly SentItem[],
  answer: { records: readonly AnyRecord[]; remaining: number | null; at: number },
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
    if (!records || records.length === 0) continue;
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
