import { CACHED_ROW, type RowIndex } from '../join/row-index.js';
import type { SameRequests } from '../join/same-request.js';
import type { StreamJoin } from '../join/stream-join.js';
import type {
  BatchItem,
  CachedAnswer,
  LeafResult,
  ResolvedRun,
  RunProgress,
  RunWords,
} from '../types.js';
import type { BatchContext } from './batch-context.js';
import { startBatch } from './batch-task.js';
import type { CacheLookup } from './cache-hits.js';
import { cachedOutcome, creditsSaved } from './cache-use.js';
import { classifyRows } from './classify.js';
import type { FlightGate } from './flight-gate.js';
import { CACHED_ANSWER_GONE, heldAtTimeout } from './messages.js';
import { noRecords } from '../join/join.js';
import { classifyClaimed, type ClaimsUse, type HeldEvent } from './classify-claimed.js';
import type { RefillRow, Resent } from './refill.js';

/** What the first pass over the input leaves for the rest of the run. */
export interface Driven {
  /** Per input row: -1 invalid, its own index when sent (or meant to be), else its representative. */
  reps: RowIndex;
  /** How many duplicates each representative row has. */
  dupCounts: Map<number, number>;
  valid: number;
  duplicates: number;
  /** Rows answered from the results cache (not counting their duplicates), and what they would have cost. */
  cacheHits: number;
  creditsSaved: number;
  /** Rows an earlier attempt of the run took from the cache, whose answer is gone since (written failed). */
  cacheGone: number;
  /** Rows an earlier attempt took from the cache, whose answer was gone, sent again by this run (refill.ts). */
  cacheResent: number;
  /** Rows another run was still sending at --timeout (written failed, not sent). */
  heldOut: number;
  /**
   * Rows whose request a run sent without getting its answer (marked in the results cache):
   * written failed, not sent (unless --resend-unconfirmed, which reads no mark).
   */
  unconfirmedEarlier: number;
  overBudget: number;
  /** One per batch, in order: its leaves once it ends. */
  tasks: Promise<LeafResult[]>[];
}

/** The run's progress counters and how to report them. */
export interface ProgressSink {
  readonly progress: RunProgress;
  emit(): void;
}

const INVALID = -1;

/**
 * The submit driver: reads the classified rows, hands each to the join, and starts each
 * batch as it fills. A batch is in flight from its POST until it ends (results spooled, or
 * failed, expired, timed out); the gate bounds how many are (a fixed `--concurrency`, or as
 * many as the service shows it runs side by side), and the reader waits for a place, which
 * bounds the rows held in memory.
 */
export async function driveBatches(
  run: ResolvedRun,
  ctx: BatchContext,
  to: {
    join: StreamJoin | undefined;
    sink: ProgressSink;
    reps: RowIndex;
    gate: FlightGate;
    cache?: CacheLookup;
    /** Without dedupe: told each batch's items, so the join knows the rows that sent one request. */
    sameRequests?: SameRequests | undefined;
    /** By request key: the outcomes of rows whose cached answer was gone, sent again (refill.ts). */
    resent?: Resent;
    /** Rows are claimed before they are sent, and held back while another run sends them. */
    claims?: DriveClaims;
  },
): Promise<Driven> {
  const d: Driven = {
    reps: to.reps,
    dupCounts: new Map(),
    valid: 0,
    duplicates: 0,
    cacheHits: 0,
    creditsSaved: 0,
    cacheGone: 0,
    cacheResent: 0,
    heldOut: 0,
    unconfirmedEarlier: 0,
    overBudget: 0,
    tasks: [],
  };
  try {
    await classifyInto(d, run, ctx, to);
  } catch (err) {
    // The input broke off (a malformed line), or the join failed: the batches already sent
    // are still downloaded (and cached) before the run stops, so nothing paid is lost.
    await Promise.allSettled(d.tasks);
    throw err;
  }
  return d;
}

/** The reading loop of driveBatches: every classified row to the join, every batch sent. */
async function classifyInto(
  d: Driven,
  run: ResolvedRun,
  ctx: BatchContext,
  to: Parameters<typeof driveBatches>[2],
): Promise<void> {
  const { join, sink } = to;
  const { progress } = sink;
  const journaledCount = (no: number) => ctx.journal.state.batches.get(String(no))?.count;
  const state = { budget: ctx.budget, journaledCount, ...(to.cache ? { cache: to.cache } : {}) };
  const rows = run.source.rows();
  const decisions = heldDecisions(ctx);
  for await (const c of to.claims
    ? classifyClaimed(run, rows, state, to.claims.use)
    : classifyRows(run, rows, state)) {
    if (c.t === 'hits') {
      decisions.hold(c);
      continue;
    }
    if (c.t === 'resend') {
      // Their outcomes (in `resent`) before the rows they answer are handed out; the decisions
      // that made them hits first (a resume sends again what its journal says it sent).
      await decisions.journal();
      await to.claims?.resend(c.rows);
      continue;
    }
    if (c.t !== 'batch') {
      if (++progress.rowsRead % 10_000 === 0) sink.emit();
      // The next row is read only once the join has room for it (the classification is lazy).
      if (join?.full()) await join.room();
    }
    if (c.t === 'batch') {
      progress.jobsTotal++;
      to.sameRequests?.note(c.items);
      const release = await to.gate.acquire();
      const held = decisions.count();
      const task = startBatch(ctx, String(c.no), c.items, c.paid, () => decisions.journal(held));
      void task.done.then(release, release);
      to.claims?.releaseAfter(task.done, c.items);
      d.tasks.push(settleBatch(c.no, task.done, join, sink));
      continue;
    }
    if (c.t === 'invalid') {
      d.reps.push(INVALID);
      join?.invalid(c.row, c.invalid);
      continue;
    }
    d.valid++;
    if (c.t === 'held') {
      d.reps.push(CACHED_ROW);
      heldRow(d, c, to, run.words);
      continue;
    }
    if (c.t === 'cached') {
      d.reps.push(CACHED_ROW);
      // Looked up first: the resent rows' answers went into the cache too.
      const resent = to.resent?.outcomes.size ? to.resent.outcomes.get(c.key) : undefined;
      if (resent) {
        if (to.resent?.over.has(c.key)) d.overBudget++;
        else if (to.resent?.held?.has(c.key)) d.heldOut++;
        else d.cacheResent++;
        join?.cached(c.row, resent);
        continue;
      }
      countCached(d, c.answer);
      join?.cached(c.row, cachedOutcome(c.answer, CACHED_ANSWER_GONE, run.words));
      continue;
    }
    if (c.t === 'duplicate') {
      d.reps.push(c.of);
      d.dupCounts.set(c.of, (d.dupCounts.get(c.of) ?? 0) + 1);
      d.duplicates++;
      join?.duplicate(c.row, c.of);
      continue;
    }
    d.reps.push(c.row.index);
    if (c.t === 'over-budget') d.overBudget++;
    join?.sent(c.row, c.t === 'send' ? c.batch : -1);
  }
  // The decisions of rows after the last batch, unless the run stopped sending (a Ctrl-C, a
  // stop): rows it decided and never sent are decided again by its resume.
  if (!ctx.stopped() && !ctx.env.signal?.aborted) await decisions.journal();
}

/**
 * The cache decisions of classified rows, journaled once the batch they precede has its place,
 * right before its POST (a resumed run must rebuild that batch alike), not when they are made:
 * rows a run decided but never sent (a batch waiting for a place when the run was killed) are
 * then decided again by its resume, from the cache as it is by then (another file's run may have
 * paid for them meanwhile), instead of being sent as that attempt decided (chaos campaign).
 */
function heldDecisions(ctx: BatchContext) {
  const pending: { upTo: number; ranges: [number, number][] }[] = [];
  let held = 0; // spans handed out so far
  let journaled = 0; // of them, in order
  let writing = Promise.resolve();
  return {
    hold(c: { upTo: number; ranges: [number, number][] }): void {
      pending.push({ upTo: c.upTo, ranges: c.ranges });
      held++;
    },
    /** How many spans were handed out so far (a batch's own are among them once it is). */
    count: (): number => held,
    /** Journals, in order, the spans up to the `upTo`-th (all by default) not yet journaled. */
    journal(upTo = held): Promise<void> {
      writing = writing.then(async () => {
        for (; journaled < upTo; journaled++) {
          const h = pending.shift()!;
          await ctx.journal.append({ t: 'hits', ...h });
        }
      });
      return writing;
    },
  };
}

/** How a run claims its rows (row-claims.ts), sends those whose claim ended unanswered, and gives claims back. */
export interface DriveClaims {
  use: ClaimsUse;
  /** Sends rows another run held and left unanswered; their outcomes go to `resent`. */
  resend(rows: RefillRow[]): Promise<void>;
  /** Gives the claims of a batch's rows back once it ended and its answers are committed to the cache. */
  releaseAfter(done: Promise<readonly LeafResult[]>, items: readonly BatchItem[]): void;
}

/** Counts a row the cache decided: a hit, an unconfirmed request's mark, or an answer gone since. */
function countCached(d: Driven, answer: CachedAnswer | undefined): void {
  if (answer?.unconfirmed) d.unconfirmedEarlier++;
  else if (answer) d.cacheHits++;
  else d.cacheGone++;
  d.creditsSaved += creditsSaved(answer);
}

/** A row another run was sending when this one read it: its outcome to the join, counted. */
function heldRow(
  d: Driven,
  c: Extract<HeldEvent, { t: 'held' }>,
  to: Parameters<typeof driveBatches>[2],
  words: RunWords,
): void {
  const timeout = words.option('timeoutMs');
  if (c.answer) {
    countCached(d, c.answer);
    to.join?.cached(c.row, cachedOutcome(c.answer, CACHED_ANSWER_GONE, words));
    return;
  }
  if (c.heldBy) {
    d.heldOut++;
    const outcome = noRecords('failed', heldAtTimeout(c.heldBy.pid, timeout, c.heldBy.ended));
    // The second pass reads it from there too (as a cached row's).
    to.resent?.outcomes.set(c.key, outcome);
    to.join?.cached(c.row, outcome);
    return;
  }
  if (to.resent?.over.has(c.key)) d.overBudget++;
  const sent = to.resent?.outcomes.get(c.key);
  to.join?.cached(c.row, sent ?? noRecords('failed', CACHED_ANSWER_GONE));
}

/** Counts a batch's end into the progress and hands its leaves to the join. */
function settleBatch(
  no: number,
  done: Promise<LeafResult[]>,
  join: StreamJoin | undefined,
  sink: ProgressSink,
): Promise<LeafResult[]> {
  const task = done.then(
    (leaves) => {
      sink.progress.jobsDone++;
      for (const l of leaves) sink.progress.creditsCharged += l.credits;
      join?.batchDone(no, leaves);
      sink.emit();
      return leaves;
    },
    (err: unknown) => {
      // The run fails with this error (Promise.all of the tasks); the join must not wait for it.
      join?.batchDone(no, []);
      throw err;
    },
  );
  // Handled here too: a batch failing while the reader still reads is an error of the run,
  // reported by Promise.all later, not an unhandled rejection that kills the process.
  task.catch(() => undefined);
  return task;
}
