import { copyWith } from '../../copy-with.js';
import type { InputRow } from '../../io/read.js';
import { ID_FIELD, ROW_FIELD } from '../join/join.js';
import { validateRow, type InvalidRow } from '../mapping/validate.js';
import type { BatchItem, CachedAnswer, ResolvedRun } from '../types.js';
import { affordableRows, type Budget } from './budget.js';
import { createHitTracker, type CacheLookup, type HitRanges } from './cache-hits.js';
import { createDeduper } from './dedupe.js';

/**
 * What becomes of one input row, decided once for the dry run and the run alike:
 * invalid (never sent), a duplicate of an earlier row (shares its request), answered by the
 * results cache (never sent; `answer` undefined when an earlier attempt of the run took it
 * from the cache and it is gone since), over the budget (never sent), or sent in batch `batch`.
 */
export type RowClass =
  | { t: 'invalid'; row: InputRow; invalid: InvalidRow }
  | { t: 'duplicate'; row: InputRow; of: number }
  | { t: 'cached'; row: InputRow; key: string; answer?: CachedAnswer }
  | { t: 'over-budget'; row: InputRow }
  | { t: 'send'; row: InputRow; batch: number };

/** A batch is complete: `paid` when its rows took their credits as they were classified. */
export interface BatchReady {
  t: 'batch';
  no: number;
  items: BatchItem[];
  paid: boolean;
}

/** The cache decisions of the rows up to `upTo` since the last such event (journaled before a batch is sent). */
export interface HitsSpan {
  t: 'hits';
  upTo: number;
  ranges: HitRanges;
}

/** What classification needs beyond the resolved run. */
export interface ClassifyState {
  /** The spending limit (rows of batches new to the journal take their credits here). */
  budget?: Budget;
  /** The row count of batch `no` as an earlier run journaled it (a resumed run rebuilds it alike). */
  journaledCount?: (no: number) => number | undefined;
  /** The results cache (none: every valid row is sent). */
  cache?: CacheLookup;
}

export type Classifiable = Pick<
  ResolvedRun,
  'kind' | 'mapping' | 'validate' | 'dedupe' | 'idColumn' | 'batchSize'
>;

/**
 * Classifies every row of `rows`, in order, and hands out each batch as it fills (right
 * after the row that filled it) and the last one at the end. Lazy: the consumer's pace
 * (a free submission slot, room in the join) is the reader's pace. classifyClaimed is the
 * same with rows claimed before they are sent (row-claims.ts).
 */
export async function* classifyRows(
  run: Classifiable,
  rows: AsyncIterable<InputRow>,
  state: ClassifyState = {},
): AsyncGenerator<RowClass | BatchReady | HitsSpan> {
  const k = classifier(run, state);
  let last = -1;
  for await (const row of rows) {
    last = row.index;
    const c = k.one(row, true);
    yield c;
    if (c.t === 'send' && k.full()) {
      yield* k.span(row.index);
      yield k.ready();
    }
  }
  yield* k.span(last);
  if (k.items.length > 0) yield k.ready();
}

/**
 * What classification keeps across rows: duplicates seen, the cache decisions, the spending
 * limit and the batch being filled.
 */
export function classifier(run: Classifiable, state: ClassifyState) {
  const deduper = run.dedupe ? createDeduper() : undefined;
  const { budget, journaledCount = () => undefined } = state;
  const hits = createHitTracker(state.cache);
  let no = 0;
  let journaled = journaledCount(0);
  let items: BatchItem[] = [];
  return {
    hits,
    get items(): readonly BatchItem[] {
      return items;
    },
    /** Whether the batch being filled is one an earlier run journaled (rebuilt alike, never held back). */
    get journaled(): boolean {
      return journaled !== undefined;
    },
    full: () => items.length >= (journaled ?? run.batchSize),
    /**
     * What becomes of `row`; a row to send joins the batch being filled. `note`: its cache
     * decision is noted now (else by the caller, in order, once final).
     */
    one(row: InputRow, note: boolean): RowClass {
      const v = validateRow(run.kind, run.mapping, row, run.validate);
      if (!v.ok) return { t: 'invalid', row, invalid: v };
      const first = deduper?.check(v.key, row.index);
      if (first !== undefined) return { t: 'duplicate', row, of: first };
      const cached = note ? hits.check(row.index, v.key) : hits.lookup(row.index, v.key);
      if (cached.hit) return { t: 'cached', row, key: v.key, answer: cached.answer };
      // A batch an earlier run journaled takes its credits before its POST, not here.
      if (budget && journaled === undefined) {
        if (affordableRows(budget) === 0) return { t: 'over-budget', row };
        budget.left -= budget.perRow;
      }
      items.push({ index: row.index, element: elementOf(run, row, v.fields), key: v.key });
      return { t: 'send', row, batch: no };
    },
    /** Takes rows out of the batch being filled (held back: another run sends them), their credits back. */
    drop(indexes: ReadonlySet<number>): void {
      const before = items.length;
      items = items.filter((i) => !indexes.has(i.index));
      if (budget && journaled === undefined) budget.left += (before - items.length) * budget.perRow;
    },
    /** The journal's record of the cache decisions up to `index` (before a batch is sent). */
    span(index: number): HitsSpan[] {
      const s = hits.span(index);
      return s ? [{ t: 'hits', ...s }] : [];
    },
    /** The batch being filled, handed out; the next one starts. */
    ready(): BatchReady {
      const batch: BatchReady = { t: 'batch', no, items, paid: journaled === undefined };
      items = [];
      journaled = journaledCount(++no);
      return batch;
    },
  };
}

export type Classifier = ReturnType<typeof classifier>;

/** The request element of a row: its fields and the row id (and the user's id) to join back by. */
export function elementOf(
  run: Pick<Classifiable, 'idColumn'>,
  row: InputRow,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const customFields: Record<string, unknown> = { [ROW_FIELD]: row.index };
  if (run.idColumn !== undefined) customFields[ID_FIELD] = row.cells[run.idColumn] ?? '';
  return copyWith(fields, { custom_fields: customFields });
}
