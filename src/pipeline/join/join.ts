/**
 * The join: attaching the records of a batch back to the rows that asked for them.
 * Records are matched by the row id the tool put in `custom_fields`; when a record
 * came back without it, by its `original_fields` (the echo of what was sent): to the
 * one row that sent it, or, when several rows of the batch sent the same request
 * (`--no-dedupe`), shared out among them. A record is never attached to a row it does
 * not provably belong to, nor to two rows: such rows end `missing` instead.
 */

import { hasNoData, isCreditExhausted } from '../../contract/credits.js';
import type { LeafResult, RowStatus } from '../types.js';

/** The `custom_fields` keys the tool sends with every element. */
export const ROW_FIELD = 'enrich_row';
export const ID_FIELD = 'enrich_id';

/** The statuses a row can end with (DESIGN.md section 4). */
export type { RowStatus } from '../../io/write.js';

/** What the output says of one row. */
export interface RowOutcome<R = Record<string, unknown>> {
  status: RowStatus;
  error: string;
  /** null: not sent; 'unknown': sent, and its answer not seen (it may have been charged). */
  creditCharged: boolean | null | 'unknown';
  records: R[];
  /** Taken from the results cache: when the service first gave this answer (epoch ms). */
  cachedAt?: number;
}

type AnyRecord = Record<string, unknown>;

/** The records of one batch, indexed for the join. */
export interface BatchLookup {
  byRow: Map<number, AnyRecord[]>;
  byKey: Map<string, AnyRecord[]>;
  /** Each record's place in the answer, kept only when some record came without its row id. */
  at?: Map<AnyRecord, number>;
  /** Records of a credit retry's answer, with the balance it showed (0: dry again). */
  answeredWith?: Map<AnyRecord, number | null>;
  /** Per key sent by several rows (`--no-dedupe`): its records without a row id, shared out (shareEchoed). */
  shares?: Map<string, Map<number, AnyRecord[]>>;
}

/** Reads the row id from a record's `custom_fields`, if it is there and well-formed. */
export function rowIdOf(record: AnyRecord): number | undefined {
  const cf = record.custom_fields;
  if (!cf || typeof cf !== 'object') return undefined;
  const raw = (cf as AnyRecord)[ROW_FIELD];
  const n =
    typeof raw === 'number'
      ? raw
      : typeof raw === 'string' && raw.trim() !== ''
        ? Number(raw)
        : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** Reads `original_fields` as an object (the spec declares it a string; samples show an object). */
export function originalFieldsOf(record: AnyRecord): AnyRecord | undefined {
  const of = record.original_fields;
  if (of && typeof of === 'object' && !Array.isArray(of)) return of as AnyRecord;
  if (typeof of === 'string') {
    try {
      const parsed: unknown = JSON.parse(of);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return parsed as AnyRecord;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Indexes a batch's records (pure). `belongs(row)` says whether a row id is one this
 * batch sent; records naming any other row are dropped. `keyOf` computes the dedupe
 * key of an `original_fields` echo (undefined when it cannot).
 */
export function indexBatch(
  records: readonly AnyRecord[],
  belongs: (row: number) => boolean,
  keyOf: (fields: AnyRecord) => string | undefined,
): BatchLookup {
  const byRow = new Map<number, AnyRecord[]>();
  const byKey = new Map<string, AnyRecord[]>();
  for (const record of records) {
    if (!record || typeof record !== 'object') continue;
    const row = rowIdOf(record);
    if (row !== undefined) {
      if (belongs(row)) push(byRow, row, record);
      continue;
    }
    const fields = originalFieldsOf(record);
    const key = fields ? keyOf(fields) : undefined;
    if (key !== undefined) push(byKey, key, record);
  }
  if (byKey.size === 0) return { byRow, byKey };
  // A row may get records both ways (a company's --top matches, some without custom_fields):
  // merged, they keep the order the service gave them.
  const at = new Map<AnyRecord, number>();
  records.forEach((r, i) => at.set(r, i));
  return { byRow, byKey, at };
}

/**
 * A credit retry's answer laid over its batch's (pure, in place): the retry answers again for
 * the rows it sent, whose earlier records all ran short (not charged, no data), so those go,
 * however each was joined (by row id or by its echo: `custom_fields` is optional, and the two
 * answers need not agree), and the retry's take their place. Records of other rows that sent
 * the same request (`--no-dedupe`) and got an answer stay.
 */
export function overlayRetry(
  lookup: BatchLookup,
  retry: BatchLookup,
  keyOf: (fields: AnyRecord) => string | undefined,
): void {
  const keyOfRecord = (r: AnyRecord) => {
    const fields = originalFieldsOf(r);
    return fields ? keyOf(fields) : undefined;
  };
  const keys = new Set(retry.byKey.keys());
  for (const records of retry.byRow.values())
    for (const r of records) {
      const k = keyOfRecord(r);
      // Stryker disable next-line ConditionalExpression: an undefined key is never looked up (a record without an echo is looked up as '')
      if (k !== undefined) keys.add(k);
    }
  const short = (r: AnyRecord) => isCreditExhausted(r, 0);
  for (const [row, records] of lookup.byRow)
    if (
      !retry.byRow.has(row) &&
      records.every(short) &&
      // Stryker disable next-line MethodExpression: a row's records answer one request, so they share one key
      records.some((r) => keys.has(keyOfRecord(r) ?? ''))
    )
      lookup.byRow.delete(row);
  for (const key of keys) {
    const kept = (lookup.byKey.get(key) ?? []).filter((r) => !short(r));
    const fresh = [...kept, ...(retry.byKey.get(key) ?? [])];
    if (fresh.length > 0) lookup.byKey.set(key, fresh);
    else lookup.byKey.delete(key);
  }
  for (const [row, records] of retry.byRow) lookup.byRow.set(row, records);
}

/**
 * A credit retry's answer laid over its batch's (overlayRetry), each of its records noted with
 * the balance that answer showed (`answeredWith`; 0: dry again), which tells a no-match from a
 * shortage in it (pure, in place).
 */
export function overlayAnswer(
  lookup: BatchLookup,
  retry: BatchLookup,
  remaining: number | null,
  keyOf: (fields: AnyRecord) => string | undefined,
): void {
  overlayRetry(lookup, retry, keyOf);
  const answered = (lookup.answeredWith ??= new Map());
  for (const records of [...retry.byRow.values(), ...retry.byKey.values()])
    for (const r of records) answered.set(r, remaining);
}

/** The balance `record`'s answer showed: its credit retry's, else `own` (the batch's). */
export function balanceOf(
  lookup: BatchLookup,
  record: AnyRecord,
  own: number | null,
): number | null {
  const answered = lookup.answeredWith?.get(record);
  return answered === undefined ? own : answered;
}

function push<K>(map: Map<K, AnyRecord[]>, key: K, record: AnyRecord): void {
  const list = map.get(key);
  if (list) list.push(record);
  else map.set(key, [record]);
}

/**
 * The records for one row: those naming its row id, and those that came without one whose
 * `original_fields` echo its key: all of them when no other row of the batch sent that key
 * (which dedupe guarantees), else the row's share of them (`twins`: the rows of the batch that
 * sent the key, the row among them; shareEchoed), merged in the service's order: no paid match
 * is dropped, and `--top` ranks stay as the service ranked them.
 */
export function recordsForRow(
  lookup: BatchLookup,
  row: number,
  key: string,
  twins: readonly number[],
): AnyRecord[] | undefined {
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a share among one row is all of the key's records
  const echoed = twins.length > 1 ? sharesOf(lookup, key, twins).get(row) : lookup.byKey.get(key);
  return mergeRecords(lookup, row, echoed);
}

/** A row's own records (by row id) and `echoed` ones (by its key), in the service's order. */
export function mergeRecords(
  lookup: BatchLookup,
  row: number,
  echoed: readonly AnyRecord[] | undefined,
): AnyRecord[] | undefined {
  const own = lookup.byRow.get(row);
  if (!echoed || echoed.length === 0) return own;
  if (!own) return [...echoed];
  const at = lookup.at;
  return [...own, ...echoed].sort((a, b) => (at?.get(a) ?? 0) - (at?.get(b) ?? 0));
}

/**
 * The records without a row id of a key that several rows of the batch sent (identical
 * requests, `--no-dedupe`), shared out among those `rows` (in input order): their answers
 * cannot be told apart, so each row takes its turn, never a record another row took. A
 * request got `per` records (the key's records, own and echoed, over its rows: 1 for a
 * contact, up to `--top` for a company), and each row takes what it lacks of them: copies
 * of one match (the same record for each request) go one to each row, so a company's
 * matches stay distinct; what is left goes to rows still short. Every record is placed (pure).
 * Which request a record answered cannot be told (no row id, and api-spec.md promises no
 * order), so the share does not follow the answer's order: matches go first, to the first
 * rows, and records with an error (requests the credits did not cover) to the rows after them.
 * A row thus gets its company's matches whole rather than two rows a part each (a row with a
 * match is never sent again, credit-retry.ts), and the rows left short, sent again after a
 * top-up, are the later ones.
 */
export function shareEchoed(
  lookup: BatchLookup,
  key: string,
  rows: readonly number[],
): Map<number, AnyRecord[]> {
  const echoed = lookup.byKey.get(key) ?? [];
  const owned = (r: number) => lookup.byRow.get(r) ?? [];
  let total = echoed.length;
  for (const r of rows) total += owned(r).length;
  const per = Math.ceil(total / Math.max(1, rows.length));
  const need = new Map(rows.map((r) => [r, per - owned(r).length]));
  const has = new Map(rows.map((r) => [r, new Set(owned(r).map(contentOf))]));
  const shares = new Map<number, AnyRecord[]>();
  const give = (r: number, record: AnyRecord, content: string) => {
    const list = shares.get(r);
    if (list) list.push(record);
    else shares.set(r, [record]);
    need.set(r, (need.get(r) as number) - 1);
    has.get(r)?.add(content);
  };
  // Copies of one match, in the order the answer first showed each match; every match before
  // the records with an error (no order is promised: see above).
  const copies = new Map<string, AnyRecord[]>();
  const good = echoed.filter((r) => errorOf(r) === '');
  for (const record of [...good, ...echoed.filter((r) => errorOf(r) !== '')]) {
    const content = contentOf(record);
    const list = copies.get(content);
    if (list) list.push(record);
    else copies.set(content, [record]);
  }
  const left: [AnyRecord, string][] = [];
  for (const [content, list] of copies)
    for (const record of list) {
      const r = rows.find((x) => (need.get(x) as number) > 0 && !has.get(x)?.has(content));
      if (r === undefined) left.push([record, content]);
      else give(r, record, content);
    }
  // Since per * rows >= total, the rows still short can take every record left.
  for (const [record, content] of left) {
    const r = rows.find((x) => (need.get(x) as number) > 0) ?? (rows[0] as number);
    give(r, record, content);
  }
  return shares;
}

/** shareEchoed of `key` among `rows`, worked out once per lookup (kept in `shares`). */
export function sharesOf(
  lookup: BatchLookup,
  key: string,
  rows: readonly number[],
): Map<number, AnyRecord[]> {
  const shares = (lookup.shares ??= new Map());
  let share = shares.get(key);
  if (!share) shares.set(key, (share = shareEchoed(lookup, key, rows)));
  return share;
}

/** A record's content, without this run's echoes: copies of one match read alike. */
function contentOf(record: AnyRecord): string {
  const { custom_fields: _ids, original_fields: _sent, ...rest } = record;
  return JSON.stringify(rest);
}

function errorOf(record: AnyRecord): string {
  return typeof record.error === 'string' ? record.error.trim() : '';
}

/**
 * The outcome of a row from its records: enriched when at least one record came
 * back without an error; not_found when every record says, by its data, that the service
 * had no match (an error, no data, and not a credit shortage: `remaining` credits, the
 * answer's, were enough for a record); failed with the first error otherwise; missing
 * when nothing came back. Records with an error beside good ones (a company whose `--top 3` matches
 * ran out of credits after the first) are dropped, and the row's error says so: the row
 * is enriched but incomplete, which must not pass for complete.
 */
export function outcomeFromRecords(
  records: readonly AnyRecord[] | undefined,
  remaining?: number | null,
): RowOutcome<AnyRecord> {
  if (!records || records.length === 0)
    // Sent, and left out of the answer: whether it was charged, nothing says.
    return noRecords('missing', 'the job returned no result for this row', 'unknown');
  const good = records.filter((r) => errorOf(r) === '');
  const charged = records.some((r) => r.credit_charged === true);
  if (good.length > 0) {
    // Per row: looked for only when some record was set aside.
    const bad = good.length < records.length ? records.find((r) => errorOf(r) !== '') : undefined;
    const error = bad
      ? `${records.length - good.length} of ${records.length} matches not returned: ${errorOf(bad)}`
      : '';
    return { status: 'enriched', error, creditCharged: charged, records: good };
  }
  // Read from the data, never the wording: "no match" and "out of credits" may read alike.
  const noMatch = records.every((r) => hasNoData(r) && !isCreditExhausted(r, remaining));
  return {
    status: noMatch ? 'not_found' : 'failed',
    error: errorOf(records[0] as AnyRecord),
    creditCharged: charged,
    records: [],
  };
}

/**
 * Rows of a leaf batch that were (or may have been) sent and whose records were never seen:
 * unconfirmed, or accepted and not downloaded (still running, expired, failed).
 */
export function chargeUnknownRows(l: LeafResult): number {
  if (l.state === 'unconfirmed' || (l.state !== 'spooled' && l.jobId !== undefined)) return l.count;
  return 0;
}

/** The outcome of a row that has no record: by default, not sent (nothing was charged for it). */
export function noRecords(
  status: RowStatus,
  error: string,
  creditCharged: RowOutcome['creditCharged'] = null,
): RowOutcome<AnyRecord> {
  return { status, error, creditCharged, records: [] };
}
