import type { InputRow } from '../../io/read.js';
import { ID_FIELD, ROW_FIELD } from '../join/join.js';
import { validateRow, type InvalidRow } from '../mapping/validate.js';
import type { BatchItem, ResolvedRun } from '../types.js';
import { affordableRows, type Budget } from './budget.js';
import { createDeduper } from './dedupe.js';

/**
 * What becomes of one input row, decided once for the dry run and the run alike:
 * invalid (never sent), a duplicate of an earlier row (shares its request), over the
 * budget (never sent), or sent in batch `batch`.
 */
export type RowClass =
  | { t: 'invalid'; row: InputRow; invalid: InvalidRow }
  | { t: 'duplicate'; row: InputRow; of: number }
  | { t: 'over-budget'; row: InputRow }
  | { t: 'send'; row: InputRow; batch: number };

/** A batch is complete: `paid` when its rows took their credits as they were classified. */
export interface BatchReady {
  t: 'batch';
  no: number;
  items: BatchItem[];
  paid: boolean;
}

/** What classification needs beyond the resolved run. */
export interface ClassifyState {
  /** The spending limit (rows of batches new to the journal take their credits here). */
  budget?: Budget;
  /** The row count of batch `no` as an earlier run journaled it (a resumed run rebuilds it alike). */
  journaledCount?: (no: number) => number | undefined;
}

type Classifiable = Pick<
  ResolvedRun,
  'kind' | 'mapping' | 'validate' | 'dedupe' | 'idColumn' | 'batchSize'
>;

/**
 * Classifies every row of `rows`, in order, and hands out each batch as it fills (right
 * after the row that filled it) and the last one at the end. Lazy: the consumer's pace
 * (a free submission slot, room in the join) is the reader's pace.
 */
export async function* classifyRows(
  run: Classifiable,
  rows: AsyncIterable<InputRow>,
  state: ClassifyState = {},
): AsyncGenerator<RowClass | BatchReady> {
  const deduper = run.dedupe ? createDeduper() : undefined;
  const { budget, journaledCount = () => undefined } = state;
  let no = 0;
  let journaled = journaledCount(0);
  let items: BatchItem[] = [];
  const ready = (): BatchReady => {
    const batch: BatchReady = { t: 'batch', no, items, paid: journaled === undefined };
    items = [];
    journaled = journaledCount(++no);
    return batch;
  };
  for await (const row of rows) {
    const v = validateRow(run.kind, run.mapping, row, run.validate);
    if (!v.ok) {
      yield { t: 'invalid', row, invalid: v };
      continue;
    }
    const first = deduper?.check(v.key, row.index);
    if (first !== undefined) {
      yield { t: 'duplicate', row, of: first };
      continue;
    }
    // A batch an earlier run journaled takes its credits before its POST, not here.
    if (budget && journaled === undefined) {
      if (affordableRows(budget) === 0) {
        yield { t: 'over-budget', row };
        continue;
      }
      budget.left -= budget.perRow;
    }
    yield { t: 'send', row, batch: no };
    items.push({ index: row.index, element: elementOf(run, row, v.fields) });
    if (items.length >= (journaled ?? run.batchSize)) yield ready();
  }
  if (items.length > 0) yield ready();
}

/** The request element of a row: its fields and the row id (and the user's id) to join back by. */
function elementOf(
  run: Classifiable,
  row: InputRow,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  const customFields: Record<string, unknown> = { [ROW_FIELD]: row.index };
  if (run.idColumn !== undefined) customFields[ID_FIELD] = row.cells[run.idColumn] ?? '';
  return { ...fields, custom_fields: customFields };
}
