import { copyWith } from '../../copy-with.js';
import type { InputRow, InputSource } from '../../io/read.js';
import type { BulkKind, LeafResult } from '../types.js';
import {
  balanceOf,
  chargeUnknownRows,
  indexBatch,
  overlayAnswer,
  mergeRecords,
  outcomeFromRecords,
  noRecords,
  sharesOf,
  type BatchLookup,
  type RowOutcome,
} from './join.js';
import type { SameRequests } from './same-request.js';
import type { JoinWriter } from './join-writer.js';
import type { ColumnMapping } from '../mapping/map-columns.js';
import { CACHED_ROW, type RowIndex } from './row-index.js';
import { readSpool } from '../journal/spool.js';
import { isCreditExhausted } from '../../contract/credits.js';
import { keyOfFields, validateRow, type ValidateOptions } from '../mapping/validate.js';

type AnyRecord = Record<string, unknown>;

/** What the join needs to know of the run to find a row's outcome. */
export interface JoinSource {
  kind: BulkKind;
  mapping: ColumnMapping;
  validate: ValidateOptions;
  dedupe: boolean;
  /** Without dedupe: the rows of each batch that sent the same request (none: records without a row id are not joined). */
  sameRequests?: SameRequests;
  /**
   * The error of a row a job's answer left out when the request asked for only some contacts
   * (`business_email_exists`, `mobile_phone_exists`): the service does not return the others.
   */
  leftOut?: string;
  journalDir: string;
  /** Per input row: -1 invalid, CACHED_ROW from the cache, its own index when sent (or meant to be), else its representative. */
  reps: RowIndex;
  /** The outcome of a row the run answered from the results cache (read from the cache again). */
  cachedOutcome?: (row: InputRow) => RowOutcome<AnyRecord>;
}

/**
 * The records of one leaf batch, indexed for the join: those handed over in memory
 * (`fresh`, taken out of it) or else read back from the spool, plus its credit retries.
 */
/** What joining a leaf's rows reads of the source: `reps` only to tell the leaf's own rows. */
type LeafSource = Omit<JoinSource, 'reps'> & { reps: Pick<RowIndex, 'get'> };

async function loadLookup(
  s: LeafSource,
  leaf: LeafResult,
  fresh?: Map<string, AnyRecord[]>,
): Promise<BatchLookup> {
  const take = async (id: string) => {
    const held = fresh?.get(id);
    fresh?.delete(id);
    return held ?? ((await readSpool(s.journalDir, id, s.kind)) as AnyRecord[]);
  };
  const belongs = (r: number) => r >= leaf.first && r <= leaf.last && s.reps.get(r) === r;
  const keyOf = (f: AnyRecord) => keyOfFields(s.kind, f);
  const lookup: BatchLookup = indexBatch(await take(leaf.id), belongs, keyOf);
  // Credit retries of the batch answer again for the rows they sent: their records replace
  // those that ran out of credits (beside them, the old errors would read as missing matches),
  // and the retry's balance, not the batch's dry one, tells whether a row had no match.
  for (const extra of leaf.extra ?? [])
    overlayAnswer(lookup, indexBatch(await take(extra.id), belongs, keyOf), extra.remaining, keyOf);
  return lookup;
}

/** The outcome of a sent row from its leaf batch's state and (when spooled) its records. */
function outcomeOfLeafRow(
  s: LeafSource,
  leaf: LeafResult | undefined,
  lookup: BatchLookup | undefined,
  row: InputRow,
  notSent: string,
): RowOutcome<AnyRecord> {
  if (!leaf || leaf.first > row.index || leaf.last < row.index) return noRecords('failed', notSent);
  // Sent and never seen again (unconfirmed, or a job not downloaded): it may have been charged.
  const charge = chargeUnknownRows(leaf) > 0 ? 'unknown' : null;
  if (leaf.state === 'expired') return noRecords('expired', leaf.error ?? '', charge);
  if (leaf.state !== 'spooled' || !lookup)
    return noRecords('failed', leaf.error ?? notSent, charge);
  let key = '';
  // Records that came without their row id: this row's key may find some of them too.
  if (lookup.byKey.size > 0) {
    const v = validateRow(s.kind, s.mapping, row, s.validate);
    key = v.ok ? v.key : '';
  }
  const records = mergeRecords(lookup, row.index, echoedFor(s, leaf, lookup, row.index, key));
  // The request asked for only some contacts, and the answer left this one out: the service
  // says it returns only those (api-spec 4.1), so this is its no-match, and nothing came back
  // to charge for (charges are reported per returned record).
  if ((!records || records.length === 0) && s.leftOut !== undefined)
    return noRecords('not_found', s.leftOut, false);
  // A batch whose answer showed the account dry: its records without data are the shortage's
  // (as credit-retry picks them), never a no-match; else the answer's balance tells.
  const own = leaf.creditError ? 0 : leaf.remaining;
  const first = records?.[0];
  const outcome = outcomeFromRecords(records, first ? balanceOf(lookup, first, own) : own);
  // A row that ran out of credits and was sent again after a top-up, in a retry whose job
  // did not finish: what became of the retry is its news, not the old shortage. Only a batch
  // whose answer showed the account dry has a retry: a record of it not charged and without
  // data is one the shortage left out, whatever its error says (as credit-retry picks them).
  const retry = leaf.retry;
  if (retry?.error && outcome.status === 'failed' && records?.every((r) => isCreditExhausted(r, 0)))
    return {
      ...outcome,
      status: retry.state === 'expired' ? 'expired' : 'failed',
      error: retry.error,
    };
  return outcome;
}

/**
 * The records without a row id that a row takes by its key: all of them when no other row of
 * its batch sent that key; a share of them when others did (--no-dedupe: identical requests,
 * whose answers cannot be told apart); none when that cannot be known.
 */
function echoedFor(
  s: LeafSource,
  leaf: LeafResult,
  lookup: BatchLookup,
  row: number,
  key: string,
): AnyRecord[] | undefined {
  if (key === '' || !lookup.byKey.has(key)) return undefined;
  if (s.dedupe) return lookup.byKey.get(key);
  if (!s.sameRequests) return undefined;
  const rows = s.sameRequests.of(row, key)?.filter((r) => r >= leaf.first && r <= leaf.last);
  if (!rows || rows.length < 2) return lookup.byKey.get(key);
  return sharesOf(lookup, key, rows).get(row);
}

/**
 * The outcome of a sent row given its leaf batch, keeping the lookup of the last leaf
 * (rows come in order, so each leaf's records are loaded and indexed once).
 */
export function leafJoiner(s: LeafSource, fresh?: Map<string, AnyRecord[]>) {
  let lookup: { leaf: LeafResult; data: BatchLookup } | undefined;
  return async (leaf: LeafResult | undefined, row: InputRow, notSent: string) => {
    if (leaf?.state === 'spooled' && leaf.first <= row.index && lookup?.leaf !== leaf)
      lookup = { leaf, data: await loadLookup(s, leaf, fresh) };
    const data = lookup && lookup.leaf === leaf ? lookup.data : undefined;
    return outcomeOfLeafRow(s, leaf, data, row, notSent);
  };
}

/** The leaf of a batch that holds row `index` (a split batch has several), if any. */
export function leafHolding(
  leaves: readonly LeafResult[] | undefined,
  index: number,
): LeafResult | undefined {
  return leaves?.find((l) => l.first <= index && index <= l.last);
}

/** A cached row's outcome in a second pass (read from the results cache again). */
export function cachedOf(s: JoinSource, row: InputRow): RowOutcome<AnyRecord> {
  return s.cachedOutcome?.(row) ?? noRecords('failed', 'the cached answer is gone');
}

/** A duplicate shares the one request that was sent; its credit was charged once, there. */
export function duplicateOutcome(first: RowOutcome<AnyRecord>): RowOutcome<AnyRecord> {
  return copyWith(first, { creditCharged: first.creditCharged === null ? null : false });
}

/**
 * The join as a second streaming pass over the input: writes every row from
 * `fromRow` on, in order, with its outcome (rows before it were written by the
 * one-pass join). Only one batch's records are in memory at a time, plus the
 * outcomes of rows whose duplicates are still to come.
 */
export async function writeJoinedFrom(
  s: JoinSource & {
    source: InputSource;
    leaves: LeafResult[];
    dupCounts: Map<number, number>;
    notSent: string;
  },
  out: JoinWriter,
  fromRow: number,
): Promise<void> {
  const cached = new Map<number, RowOutcome<AnyRecord>>();
  const remaining = new Map(s.dupCounts);
  let leafAt = 0;
  const joinLeaf = leafJoiner(s);

  const outcomeOfRep = (row: InputRow): Promise<RowOutcome<AnyRecord>> => {
    while (leafAt < s.leaves.length && (s.leaves[leafAt] as LeafResult).last < row.index) leafAt++;
    return joinLeaf(s.leaves[leafAt], row, s.notSent);
  };

  for await (const row of s.source.rows()) {
    const rep = s.reps.get(row.index);
    const write = row.index >= fromRow;
    if (rep === CACHED_ROW) {
      if (!write && !remaining.has(row.index)) continue;
      const outcome = cachedOf(s, row);
      if (remaining.has(row.index)) cached.set(row.index, outcome);
      if (write) await out.write(row, outcome);
    } else if (rep === undefined || rep < 0) {
      if (!write) continue;
      const v = validateRow(s.kind, s.mapping, row, s.validate);
      if (v.ok) await out.write(row, noRecords('invalid', 'invalid'));
      else await out.writeInvalid(row, v);
    } else if (rep === row.index) {
      // Rows already written need their outcome only when a duplicate still to be written shares it.
      if (!write && !remaining.has(rep)) continue;
      const outcome = await outcomeOfRep(row);
      if (remaining.has(rep)) cached.set(rep, outcome);
      if (write) await out.write(row, outcome);
    } else {
      const first = cached.get(rep) as RowOutcome<AnyRecord>;
      const left = (remaining.get(rep) ?? 1) - 1;
      if (left <= 0) {
        remaining.delete(rep);
        cached.delete(rep);
      } else remaining.set(rep, left);
      if (write) await out.write(row, duplicateOutcome(first));
    }
  }
}
