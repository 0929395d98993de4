import type { BatchItem, BulkKind, LeafResult } from '../types.js';
import type { BatchContext, StartBatch } from './batch-context.js';
import { affordableRows } from './budget.js';
import { budgetReached, OUT_OF_CREDITS } from './messages.js';
import { isCreditExhausted } from '../../contract/credits.js';
import { balanceOf, indexBatch, overlayAnswer, recordsForRow } from '../join/join.js';
import { readSpool } from '../journal/spool.js';
import { keyOfFields } from '../mapping/validate.js';

type AnyRecord = Record<string, unknown>;

/**
 * The id of the n-th credit retry of a batch: the rows a job returned with an
 * "out of credits" error are sent again, on a later run, as this child batch.
 */
export function creditRetryId(batchId: string, n: number): string {
  return `${batchId}.c${n}`;
}

/**
 * True for a credit retry's batch id, or one of its parts (`3.c1`, `3.c1.0`): its answer is
 * final for the rows it sent (a no-match in it is never sent again).
 */
export function isCreditRetry(batchId: string): boolean {
  return /\.c\d+(?:\.|$)/.test(batchId);
}

/** One answer for a batch's rows: the batch's own, or a credit retry's, with its balance. */
export interface Attempt {
  records: readonly AnyRecord[];
  /** What the answer showed of the balance: 0 when it showed the account dry. */
  remaining: number | null;
}

/**
 * The items of a batch whose latest answer (the batch's, or its last retry's that answered
 * the row) left every record of the row out for the shortage: not charged, no data, and the
 * answer showed the account dry. These are the rows to send again once the account has
 * credits. Rows with any good record, or no record at all, are not retried. In a dry answer a
 * row the service had no match for cannot be told from one it skipped, whatever the wording:
 * it is asked again. An answer with credits left tells them apart: a row it found nothing for
 * is a no-match, never sent again (regression: after a top-up, no-match rows were sent again
 * and again, one job each, for ever). The answers are read as the join reads them (each retry's
 * laid over the earlier ones, and the records of identical requests that came without row ids
 * shared out among their rows, --no-dedupe): the rows retried are those the join would write
 * short (regression: a row skipped beside an identical one that got a match was read with its
 * twin's match, and never sent again).
 */
export function creditFailedItems(
  kind: BulkKind,
  attempts: readonly [Attempt, ...Attempt[]],
  items: readonly BatchItem[],
): BatchItem[] {
  const [first, ...retries] = attempts;
  const rows = new Set(items.map((i) => i.index));
  const keyOf = (f: AnyRecord) => keyOfFields(kind, f);
  const index = (a: Attempt) => indexBatch(a.records, (r) => rows.has(r), keyOf);
  const lookup = index(first);
  for (const a of retries) overlayAnswer(lookup, index(a), a.remaining, keyOf);
  // The rows of the batch that sent each key (several: identical requests, --no-dedupe).
  const keys = items.map((item) => keyOfFields(kind, item.element));
  const twins = new Map<string, number[]>();
  items.forEach((item, i) => {
    const same = twins.get(keys[i]!);
    if (same) same.push(item.index);
    else twins.set(keys[i]!, [item.index]);
  });
  return items.filter((item, i) => {
    const found = recordsForRow(lookup, item.index, keys[i]!, twins.get(keys[i]!)!);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the join's lookup never holds an empty list
    if (found === undefined || found.length === 0) return false;
    return found.every((r) => isCreditExhausted(r, balanceOf(lookup, r, first.remaining)));
  });
}

/**
 * A spooled batch whose job ran out of credits, seen again by a later run: its rows that
 * came back "out of credits" are sent again as child batches (one new job per run, with
 * its own idempotency key), until none is left or the account runs dry again. The rows
 * already enriched are never sent again; the join reads the children's spools after the
 * batch's own.
 */
export async function retryCreditFailures(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  leaf: LeafResult,
  startBatch: StartBatch,
): Promise<LeafResult> {
  // The batch's own answer showed the account dry (that is how it got here).
  const attempts: [Attempt, ...Attempt[]] = [
    { records: (await readSpool(ctx.journal.dir, id, ctx.kind)) as AnyRecord[], remaining: 0 },
  ];
  const extra: NonNullable<LeafResult['extra']> = [];
  let { credits, remaining } = leaf;
  let creditsEarlier = leaf.creditsEarlier ?? 0;
  // The spooled parts of a retry, read back from the journal and spool, whichever run
  // downloaded them: their rows are paid for and join the output. `before`: the parts an
  // earlier run had spooled (and reported), a split retry's too.
  const readBack = async (child: string, before: ReadonlySet<string>) => {
    for (const part of childLeaves(ctx, child)) {
      // Stryker disable next-line OptionalChaining: childLeaves lists spooled leaves only
      const spooled = ctx.journal.state.batches.get(part)?.spooled;
      // Stryker disable next-line OptionalChaining: (likewise)
      credits += spooled?.credits ?? 0;
      // Stryker disable next-line OptionalChaining: (likewise)
      if (before.has(part)) creditsEarlier += spooled?.credits ?? 0;
      // Stryker disable next-line OptionalChaining: (likewise)
      remaining = spooled?.remaining ?? remaining;
      // Stryker disable next-line OptionalChaining,LogicalOperator: childLeaves lists spooled leaves only; and an answer not dry reads alike with its balance or none (neither is a shortage)
      const shown = spooled?.creditError ? 0 : (spooled?.remaining ?? null);
      attempts.push({
        records: (await readSpool(ctx.journal.dir, part, ctx.kind)) as AnyRecord[],
        remaining: shown,
      });
      extra.push({ id: part, remaining: shown });
    }
  };
  for (let n = 1; ; n++) {
    const child = creditRetryId(id, n);
    const known = ctx.journal.state.batches.get(child);
    const before = new Set(childLeaves(ctx, child));
    // Stryker disable next-line ConditionalExpression: a spooled retry sent again is answered from the journal, with no POST
    if (!known?.spooled) {
      let retry = creditFailedItems(ctx.kind, attempts, items);
      if (retry.length === 0)
        // Stryker disable next-line BooleanLiteral: no row is left short: every row the dry answer left without data has a retry's answer, read with that answer's own balance (the join reads the leaf's balance for no other record)
        return { ...leaf, credits, creditsEarlier, remaining, creditError: false, extra };
      // Stopped before this retry was sent (the account ran dry again, or any other stop,
      // whose code gives the exit): the rows still out of credits stay failed.
      if (!known && ctx.stopped()) break;
      if (known) {
        // Journaled by an earlier run (its POST may have reached the service): resent exactly
        // as it was, the first rows of the list it was cut from, whatever --max-credits says now.
        retry = retry.slice(0, known.count);
      } else {
        // Sending again is new spending: a new retry takes only the rows --max-credits still
        // pays for (the rest stay failed, for a later run); runBatch then takes their credits.
        const fit = affordableRows(ctx.budget);
        if (fit === 0) {
          ctx.stop('CREDITS_EXHAUSTED', budgetReached(ctx.words, ctx.budget.limit), true);
          break;
        }
        retry = retry.slice(0, fit);
      }
      // Stryker disable next-line OptionalChaining: a run always tells its progress sink (run.ts)
      ctx.onJob?.({ t: 'retried', batch: id, rows: retry.length, reason: 'out-of-credits' });
      const parts = await startBatch(ctx, child, retry, false).done;
      const unfinished = parts.find((p) => p.state !== 'spooled');
      if (unfinished) {
        await readBack(child, before); // the parts of a split retry that did finish
        // A 402 on the retry's POST: the account is dry again (exit 5).
        if (unfinished.code === 'CREDITS_EXHAUSTED') ctx.stop('CREDITS_EXHAUSTED', OUT_OF_CREDITS);
        // Otherwise still running at --timeout, failed or expired: the run is partial and
        // the same command picks the retry's job up again (exit 3, or the stop's own code).
        const { state, jobId, error } = unfinished as LeafResult & { state: RetryState };
        const retryOf = {
          state,
          batch: unfinished.id,
          ...(jobId ? { jobId } : {}),
          ...(error ? { error } : {}),
        };
        return {
          ...leaf,
          credits,
          creditsEarlier,
          remaining,
          creditError: true,
          extra,
          retry: retryOf,
        };
      }
    }
    // Spooled now: by this run, or (the leaves in `before`) by an earlier one.
    await readBack(child, before);
  }
  return { ...leaf, credits, creditsEarlier, remaining, creditError: true, extra };
}

type RetryState = NonNullable<LeafResult['retry']>['state'];

/** The spooled leaf ids of a child batch (itself, or its parts when it was split). */
function childLeaves(ctx: BatchContext, child: string): string[] {
  const state = ctx.journal.state.batches.get(child);
  if (state?.spooled) return [child];
  // Stryker disable next-line ConditionalExpression: without a split there is no part `.0` either
  if (!state?.splitSize) return [];
  const parts: string[] = [];
  for (let k = 0; ctx.journal.state.batches.has(`${child}.${k}`); k++)
    parts.push(...childLeaves(ctx, `${child}.${k}`));
  return parts;
}
