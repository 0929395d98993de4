import type { InputRow } from '../../io/read.js';
import { noRecords, type RowOutcome } from '../join/join.js';
import { leafHolding, leafJoiner, type JoinSource } from '../join/write-joined.js';
import { validateRow } from '../mapping/validate.js';
import type { BatchItem, LeafResult, ResolvedRun, RunProgress } from '../types.js';
import type { BatchContext } from './batch-context.js';
import { startBatch, stopAtBudget } from './batch-task.js';
import { affordableRows } from './budget.js';
import type { CacheLookup } from './cache-hits.js';
import { elementOf } from './classify.js';
import type { FlightGate } from './flight-gate.js';
import type { Holder } from './row-claims.js';

type AnyRecord = Record<string, unknown>;

/** The id of the n-th refill batch of a run (never a number: it is no batch of the classification). */
export function refillId(n: number): string {
  return `g${n}`;
}

/**
 * By request key: the outcomes of the rows sent again, the keys of those --max-credits left
 * unsent, and of those another run still held at this run's deadline (not sent: `held`).
 */
export interface Resent {
  outcomes: Map<string, RowOutcome<AnyRecord>>;
  over: Set<string>;
  held?: Set<string>;
}

/** A row to send again, with the input row it came from (its outcome is joined from it). */
export interface RefillRow {
  row: InputRow;
  item: BatchItem;
}

/**
 * How a resume claims the rows it sends again (row-claims.ts, made by run-claims.ts), as a first
 * run claims its batches' rows: none when the run claims no rows.
 */
export interface RefillClaims {
  /**
   * Claims the rows of journaled refill batches (sent as journaled, whoever else holds them) and
   * the rows whose answers are gone: returns those of the latter this run sends now, and those
   * another live run holds (left out, to wait for). A row answered since it was looked up
   * (another run sent it and gave it back) is in neither: taken from the cache.
   */
  claim(
    listed: readonly RefillRow[],
    gone: readonly RefillRow[],
  ): Promise<{ send: RefillRow[]; held: Map<string, { row: RefillRow; by: Holder }> }>;
  /** Gives the claims of sent rows back once their batches ended and their answers are committed. */
  releaseAfter(done: Promise<readonly LeafResult[]>, rows: readonly RefillRow[]): void;
  /**
   * Waits for the held rows (once this run's own are sent: it never waits holding claims it has
   * not sent), as the classification does: answered from the cache, sent when their claim ended
   * unanswered, or left with their holder at the deadline (failed, `held` in the run's Resent).
   */
  wait(held: Map<string, { row: RefillRow; by: Holder }>): Promise<void>;
}

/** The refill batches of a resume: the journaled ones rebuilt from their rows, then new ones. */
export interface RefillPlan {
  /** Journaled by an earlier attempt (`journaled`) or to be journaled now. */
  batches: { id: string; rows: RefillRow[]; journaled: boolean }[];
  /** Rows whose answers are gone that --max-credits leaves unsent now. */
  over: RefillRow[];
}

/**
 * Plans the refill batches of a resume (pure): the batches an earlier attempt journaled are
 * rebuilt from the rows they list, whatever the cache holds now; rows gone from the cache and
 * in none of those are cut into new batches of `batchSize`, as many rows as `fit` allows
 * (the rest are `over`). One request per request key (identical rows share the answer, as
 * they shared the cached one).
 */
export function planRefill(
  journaled: readonly { batch: string; rows: readonly number[] }[],
  listed: ReadonlyMap<number, RefillRow>,
  gone: readonly RefillRow[],
  limits: { batchSize: number; fit: number },
): RefillPlan {
  const batches: RefillPlan['batches'] = journaled.map((b) => ({
    id: b.batch,
    rows: b.rows.flatMap((i) => {
      const r = listed.get(i);
      return r ? [r] : [];
    }),
    journaled: true,
  }));
  const send = gone.slice(0, Math.max(0, limits.fit));
  for (let at = 0; at < send.length; at += limits.batchSize)
    batches.push({
      id: refillId(batches.length + 1),
      rows: send.slice(at, at + limits.batchSize),
      journaled: false,
    });
  return { batches, over: gone.slice(send.length) };
}

/** The rows of journaled refills, and the rows whose cached answer is gone, of an earlier attempt's hits. */
export async function findGone(
  run: Pick<ResolvedRun, 'kind' | 'mapping' | 'validate' | 'idColumn'> & {
    source: Pick<ResolvedRun['source'], 'rows'>;
  },
  hits: { upTo: number; ranges: readonly (readonly [number, number])[] },
  listedRows: ReadonlySet<number>,
  lookup: Pick<CacheLookup, 'any'>,
): Promise<{ listed: Map<number, RefillRow>; gone: RefillRow[] }> {
  const listed = new Map<number, RefillRow>();
  const gone: RefillRow[] = [];
  const keys = new Set<string>();
  let at = 0;
  for await (const row of run.source.rows()) {
    if (row.index > hits.upTo) break;
    while (at < hits.ranges.length && (hits.ranges[at] as readonly [number, number])[1] < row.index)
      at++;
    const range = hits.ranges[at];
    if (!range || range[0] > row.index) continue;
    const v = validateRow(run.kind, run.mapping, row, run.validate);
    // Stryker disable next-line ConditionalExpression: a row the cache answered was valid
    if (!v.ok) continue;
    const r = {
      row,
      item: { index: row.index, element: elementOf(run, row, v.fields), key: v.key },
    };
    if (listedRows.has(row.index)) {
      listed.set(row.index, r);
      keys.add(v.key);
    } else if (!keys.has(v.key) && lookup.any(v.key) === undefined) {
      keys.add(v.key);
      gone.push(r);
    }
  }
  return { listed, gone };
}

/**
 * A resumed run's rows an earlier attempt took from the results cache whose answer is gone
 * since (the cache was cleared or pruned, or the run was taken over by another key of the
 * account: the cache is per key): sent again, before the run's other batches, as refill
 * batches (`g1`, `g2`...). Each is journaled with the rows it sends (`refill`) before its
 * POST, so a later resume rebuilds it exactly and the usual path applies (its idempotency
 * key, its job adopted once accepted, downloaded once spooled): it is never paid twice. The
 * new rows count against --max-credits. Returns the outcome of each such row by request key
 * (held in memory: as many as the rows whose answers were gone), and the batches' leaves.
 * Costs a read of the input up to the last row the earlier attempts classified, on resumes
 * with cache hits only.
 */
export async function refillGone(
  run: Pick<ResolvedRun, 'kind' | 'mapping' | 'validate' | 'idColumn' | 'source' | 'batchSize'>,
  ctx: BatchContext,
  to: {
    lookup: Pick<CacheLookup, 'any'>;
    store: JoinSource;
    gate: FlightGate;
    notSent: () => string;
    claims?: RefillClaims | undefined;
  },
): Promise<Resent & { leaves: LeafResult[] }> {
  const outcomes = new Map<string, RowOutcome<AnyRecord>>();
  const over = new Set<string>();
  const { hits, refills = [] } = ctx.journal.state;
  if (!hits || hits.ranges.length === 0) return { outcomes, over, leaves: [] };
  const listedRows = new Set(refills.flatMap((b) => b.rows));
  const found = await findGone(run, hits, listedRows, to.lookup);
  const { listed } = found;
  const mine = to.claims
    ? await to.claims.claim([...listed.values()], found.gone)
    : { send: found.gone, held: new Map() };
  const gone = mine.send;
  // Journaled batches not sent yet take their credits at their POST: the new ones fit in the rest.
  const posts = refills.filter((b) => {
    const state = ctx.journal.state.batches.get(b.batch);
    return !state?.job && !state?.spooled && !state?.splitSize;
  });
  const plan = planRefill(refills, listed, gone, {
    batchSize: run.batchSize,
    fit: affordableRows(ctx.budget) - posts.reduce((n, b) => n + b.rows.length, 0),
  });
  for (const b of plan.batches)
    if (!b.journaled && b.rows.length > 0)
      await ctx.journal.append(
        { t: 'refill', batch: b.id, rows: b.rows.map((r) => r.item.index) },
        { durable: true },
      );
  const sending = sendRefills(ctx, plan.batches, to);
  to.claims?.releaseAfter(
    sending.then((s) => s.leaves),
    plan.batches.flatMap((b) => b.rows),
  );
  // Rows --max-credits leaves unsent are given back at once (no answer of this run will come).
  to.claims?.releaseAfter(Promise.resolve([]), plan.over);
  const sent = await sending;
  for (const [k, outcome] of sent.outcomes) outcomes.set(k, outcome);
  leftOver(ctx, plan.over, outcomes, over);
  // Its own rows sent, the run waits for those another run holds.
  if (mine.held.size > 0) await to.claims?.wait(mine.held);
  return { outcomes, over, leaves: sent.leaves };
}

/**
 * Sends refill batches (each journaled with its rows before, by the caller) and joins each row
 * to its records: the outcome of each row by request key, and the batches' leaves.
 */
export async function sendRefills(
  ctx: BatchContext,
  batches: readonly { id: string; rows: RefillRow[] }[],
  to: { store: JoinSource; gate: FlightGate; notSent: () => string },
): Promise<{ outcomes: Map<string, RowOutcome<AnyRecord>>; leaves: LeafResult[] }> {
  const outcomes = new Map<string, RowOutcome<AnyRecord>>();
  // Their records are read back from the spool (the stream join never holds them).
  const { spooled: _toJoin, ...own } = ctx;
  const settled = await Promise.allSettled(
    batches
      .filter((b) => b.rows.length > 0)
      .map(async (b) => {
        const release = await to.gate.acquire();
        const items = b.rows.map((r) => r.item);
        const task = startBatch(own, b.id, items, false);
        void task.done.then(release, release);
        return { rows: b.rows, leaves: await task.done };
      }),
  );
  // Every batch ended first (a POST sent gets its answer journaled), then the run fails.
  const results = settled.map((r) => {
    if (r.status === 'rejected') throw r.reason;
    return r.value;
  });
  // Each batch's records belong to the rows it sent (they lie inside other batches' ranges).
  const members = new Set(results.flatMap((b) => b.rows.map((r) => r.item.index)));
  const joinLeaf = leafJoiner({
    ...to.store,
    reps: { get: (i: number) => (members.has(i) ? i : undefined) },
  });
  for (const { rows, leaves } of results)
    for (const r of rows)
      outcomes.set(
        r.item.key,
        await joinLeaf(leafHolding(leaves, r.item.index), r.row, to.notSent()),
      );
  return { outcomes, leaves: results.flatMap((b) => b.leaves) };
}

/**
 * Rows another run held while this one classified them, whose claim ended with no answer in the
 * cache (its job failed, or its process died): sent now as refill batches (journaled with their
 * rows, like a resume's, so a later resume rebuilds them), as many as --max-credits allows.
 */
export async function resendHeld(
  run: Pick<ResolvedRun, 'batchSize'>,
  ctx: BatchContext,
  rows: readonly RefillRow[],
  to: { store: JoinSource; gate: FlightGate; notSent: () => string },
): Promise<Resent & { leaves: LeafResult[] }> {
  const first = (ctx.journal.state.refills?.length ?? 0) + 1;
  const plan = planRefill([], new Map(), [...rows], {
    batchSize: run.batchSize,
    fit: affordableRows(ctx.budget),
  });
  const batches = plan.batches.map((b, i) => ({ ...b, id: refillId(first + i) }));
  for (const b of batches)
    await ctx.journal.append(
      { t: 'refill', batch: b.id, rows: b.rows.map((r) => r.item.index) },
      { durable: true },
    );
  const sent = await sendRefills(ctx, batches, to);
  const over = new Set<string>();
  leftOver(ctx, plan.over, sent.outcomes, over);
  return { outcomes: sent.outcomes, over, leaves: sent.leaves };
}

/**
 * Rows --max-credits left unsent: failed, saying why, and the run stopped at its budget (only
 * after the refill batches' POSTs: a stop before them would have kept those unsent too).
 */
function leftOver(
  ctx: BatchContext,
  rows: readonly RefillRow[],
  outcomes: Map<string, RowOutcome<AnyRecord>>,
  over: Set<string>,
): void {
  if (rows.length === 0) return;
  const message = `not sent: ${stopAtBudget(ctx)}`;
  for (const r of rows) {
    outcomes.set(r.item.key, noRecords('failed', message));
    over.add(r.item.key);
  }
}

/** Takes the outcomes of rows sent again into `into`, and counts their batches into the progress. */
export function takeResent(
  into: Resent,
  done: Resent & { leaves: readonly LeafResult[] },
  progress: RunProgress,
): void {
  for (const [k, outcome] of done.outcomes) into.outcomes.set(k, outcome);
  for (const k of done.over) into.over.add(k);
  progress.jobsTotal += done.leaves.length;
  progress.jobsDone += done.leaves.filter((l) => l.state === 'spooled').length;
  for (const l of done.leaves) progress.creditsCharged += l.credits;
}
