import { copyWith } from '../../copy-with.js';
import type { InputRow, InputSource } from '../../io/read.js';
import type { LeafResult } from '../types.js';
import { noRecords, type RowOutcome } from './join.js';
import type { JoinWriter } from './join-writer.js';
import { CACHED_ROW } from './row-index.js';
import { validateRow, type InvalidRow } from '../mapping/validate.js';
import {
  cachedOf,
  duplicateOutcome,
  leafHolding,
  leafJoiner,
  type JoinSource,
} from './write-joined.js';

type AnyRecord = Record<string, unknown>;

/** What the trailing pass learns of the run while it runs (the stream join keeps it). */
export interface TrailFeed {
  /**
   * Resolves once `ready()` holds, checked again at every event of the run (a row handed
   * over, a batch done, every job done); rejects once the join failed or was cancelled.
   */
  until(ready: () => boolean): Promise<void>;
  /** The batch that sends row `index` (-1: never sent). */
  batchOf(index: number): number;
  /** The final leaves of batch `batch`, once it ended. */
  leaves(batch: number): LeafResult[] | undefined;
  /** Once every job is done: the error of rows that were never sent. */
  notSent(): string | undefined;
  /** Duplicates handed over and not yet written, per first occurrence (the trail counts them down). */
  readonly dups: Map<number, number>;
}

/** Where the trailing pass starts: the first row not written, and outcomes it may still need. */
export interface TrailStart {
  fromRow: number;
  /** Outcomes of rows written whose duplicates are still to be written. */
  held: Map<number, RowOutcome<AnyRecord>>;
  /** Outcomes of the last rows written (for duplicates not read yet). */
  recent: Map<number, RowOutcome<AnyRecord>>;
  keepOutcomes: number;
  /** Rows of batches it may read back for far duplicates, beyond the rows it wrote. */
  farReadRows: number;
}

/**
 * The trailing pass: a second streaming pass over the input that follows the jobs,
 * started when the one-pass join drops its window. It writes each row from `fromRow`
 * on, in order, as soon as the first pass has classified it and its batch has ended,
 * reading the batch's records back from the spool. Against a slow service the output
 * thus grows while the jobs run, and memory holds no waiting rows.
 *
 * A duplicate read long after its first occurrence was written (more than `keepOutcomes`
 * rows) gets that outcome again from the first occurrence's batch, read back from the
 * spool with the duplicate's own cells (they have the same key, which is what the join
 * matches records without a row id by). Those reads are bounded: once they would exceed
 * the rows the pass wrote plus `farReadRows`, it stops at that row and returns its
 * index, and the pass at the end of the run (writeJoinedFrom, which knows every
 * duplicate) writes from there. Returns null once it wrote the last row.
 */
export async function trailJoin(
  s: JoinSource & { source: InputSource },
  out: JoinWriter,
  feed: TrailFeed,
  start: TrailStart,
): Promise<number | null> {
  const joinLeaf = leafJoiner(s);
  const { held, recent } = start;
  const notSent = () => feed.notSent() ?? 'not sent';
  const farJoin = leafJoiner(s);
  let farLeaf: LeafResult | undefined;
  let farRows = 0;
  let written = 0;

  /** The outcome of a written row `rep` for its duplicate `row`, or undefined past the bound. */
  const farOutcome = async (row: InputRow, rep: number) => {
    if (s.reps.get(rep) === CACHED_ROW) return cachedOf(s, row);
    // Written, so its batch ended. (A row never sent is written only once every job is done,
    // after every duplicate was read: its outcome is held, never read back.)
    const leaf = leafHolding(feed.leaves(feed.batchOf(rep)), rep);
    if (leaf !== farLeaf) {
      farRows += leaf?.count ?? 0;
      if (farRows > written + start.farReadRows) return undefined;
      farLeaf = leaf;
    }
    return farJoin(leaf, copyWith(row, { index: rep }), notSent());
  };

  const sentOutcome = async (row: InputRow): Promise<RowOutcome<AnyRecord>> => {
    const batch = feed.batchOf(row.index);
    if (batch < 0) {
      await feed.until(() => feed.notSent() !== undefined);
      return noRecords('failed', feed.notSent() as string);
    }
    await feed.until(() => feed.leaves(batch) !== undefined);
    return joinLeaf(leafHolding(feed.leaves(batch), row.index), row, notSent());
  };

  const remember = (index: number, outcome: RowOutcome<AnyRecord>) => {
    // Stryker disable next-line ConditionalExpression: without dedupe no row has a duplicate; keeping outcomes would only cost memory
    if (!s.dedupe) return;
    if ((feed.dups.get(index) ?? 0) > 0) held.set(index, outcome);
    recent.set(index, outcome);
    if (recent.size > start.keepOutcomes) recent.delete(recent.keys().next().value as number);
  };

  for await (const row of s.source.rows()) {
    const index = row.index;
    if (index < start.fromRow) continue;
    // Classified: its entry in `reps` is pushed in the same step as the join is told of it.
    await feed.until(() => s.reps.length > index);
    const rep = s.reps.get(index) as number;
    if (rep === CACHED_ROW || rep === index) {
      const outcome = rep === CACHED_ROW ? cachedOf(s, row) : await sentOutcome(row);
      remember(index, outcome);
      await out.write(row, outcome);
    } else if (rep < 0) {
      // The first pass found it invalid: the same cells validated again give the same error.
      await out.writeInvalid(row, validateRow(s.kind, s.mapping, row, s.validate) as InvalidRow);
    } else {
      const first = held.get(rep) ?? recent.get(rep) ?? (await farOutcome(row, rep));
      if (!first) return index;
      const left = (feed.dups.get(rep) ?? 1) - 1;
      if (left > 0) feed.dups.set(rep, left);
      else {
        feed.dups.delete(rep);
        held.delete(rep);
      }
      await out.write(row, duplicateOutcome(first));
    }
    written++;
  }
  return null;
}
