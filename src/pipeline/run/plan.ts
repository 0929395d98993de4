import { openRejects } from '../join/rejects.js';
import type { BatchState, RunState } from '../journal/journal.js';
import type { ResolvedMapping } from '../mapping/resolve-mapping.js';
import type { CachedAnswer, ResolvedRun, ResultsCache } from '../types.js';
import { affordableRows, createBudget, takeCredits, type Budget } from './budget.js';
import { cacheLookup, withoutMarks } from './cache-use.js';
import { classifyRows } from './classify.js';
import { journaledFate } from './journaled-fate.js';

/**
 * What a bulk run would do; counts follow DESIGN.md section 4. Under the run's spending limit
 * (`maxCredits`) the counts are those of the rows the run would send within it.
 */
export interface Plan extends ResolvedMapping {
  rows: number;
  valid: number;
  invalid: number;
  duplicates: number;
  /** Rows the results cache answers (never sent, nothing charged). */
  cached: number;
  /**
   * Rows whose request an enrich run sent without getting its answer (a mark in the results
   * cache): not sent, they end `failed` (unless the run may send them again).
   */
  unconfirmed_earlier: number;
  /**
   * Rows in jobs earlier runs (of other files, or of this file before it changed) left not
   * downloaded: the run downloads those jobs first and takes the rows from the cache, unsent.
   */
  earlier_jobs: number;
  /** Rows sent (each distinct request once), within the spending limit. */
  sent: number;
  /** Rows the spending limit leaves unsent (they end `failed`), their duplicates included. */
  over_budget: number;
  /** Batches the rows sent make. */
  batches: number;
  /** The worst case for the rows sent: one credit per contact, `top` per company. */
  max_credits: number;
  /** The unfinished earlier attempt of this run the run would resume (its journal), if any. */
  resume?: ResumePlan;
}

/**
 * What a resume does with the rows an earlier attempt of the run sent (each distinct request
 * once, as `sent` counts them), by its journal (journaled-fate.ts).
 */
export interface ResumePlan {
  /** When that attempt started (ms since the epoch). */
  startedAt: number;
  /** Whether it wrote its output (a finished run is resumed too, until --refresh or --max-age). */
  finished: boolean;
  /** Rows whose answers the journal keeps: written from it, nothing sent. */
  answered: number;
  /** Rows of jobs the service accepted: their results are downloaded, nothing sent or paid again. */
  inJobs: number;
  /** Rows whose request may have been charged though its answer never came: not sent, they end `failed`. */
  unconfirmed: number;
  /** Rows of jobs whose results expired before they were downloaded: they end `failed`. */
  expired: number;
  /** Rows sent again (counted in `sent` too): a batch never confirmed sent, or answers gone from the cache. */
  resent: number;
}

/** The journal of the unfinished run a real run would resume, and whether it may send unconfirmed batches again. */
export interface PlanResume {
  state: RunState;
  mayResend: boolean;
}

/** What a plan reads besides the run: the cache, the clock, the journal it resumes. */
export interface PlanDeps {
  cache?: ResultsCache;
  now?: () => number;
  resume?: PlanResume;
  /** Tells the answers of jobs earlier runs left not downloaded (earlier-left.ts) apart. */
  inEarlierJob?: (answer: CachedAnswer) => boolean;
}

/** The plan's counters, zero. */
const zeroCounts = () => ({
  rows: 0,
  invalid: 0,
  duplicates: 0,
  cached: 0,
  marked: 0,
  inJobs: 0,
  batches: 0,
  sent: 0,
});

/**
 * The plan of a resolved run without sending anything: every row through the run's own
 * classification and spending limit (so the plan is the run's plan), counted; invalid rows go
 * to `rejects`. With `resume` (the journal of the run a real run would resume), its batches
 * are rebuilt as the resume rebuilds them, and each counted by what the resume does with it.
 */
export async function planBulk(run: ResolvedRun, deps: PlanDeps = {}): Promise<Plan> {
  const journal = deps.resume?.state;
  const hits = journal?.hits && { upTo: journal.hits.upTo, ranges: [...journal.hits.ranges] };
  // As the run reads the cache: with --resend-unconfirmed, marks of unanswered requests are misses.
  const store = deps.cache && run.resendUnconfirmed ? withoutMarks(deps.cache) : deps.cache;
  const cache = cacheLookup(store, run.cache, deps.now ?? Date.now, hits);
  const budget = createBudget(run.maxCredits, run.creditsPerRow);
  const resumed = deps.resume && resumeCounter(deps.resume, budget);
  const rejects = run.output.rejects
    ? await openRejects(run.source, run.output.rejects, run.kind, run.output.rejectsDialect)
    : undefined;
  const counts = zeroCounts();
  // The rows past the limit: their duplicates share their fate (not sent) in the run.
  const unsent = new Set<number>();
  let overBudget = 0;
  try {
    for await (const c of classifyRows(run, run.source.rows(), {
      budget,
      ...(journal ? { journaledCount: (no) => journal.batches.get(String(no))?.count } : {}),
      ...(cache ? { cache } : {}),
    })) {
      if (c.t === 'hits') continue;
      if (c.t === 'batch') {
        const b = resumed ? resumed.batch(String(c.no), c.items.length) : newBatch(c.items.length);
        counts.batches += b.posts;
        counts.sent -= b.notSent;
        overBudget += b.over;
        continue;
      }
      counts.rows++;
      if (c.t === 'invalid') {
        counts.invalid++;
        await rejects?.write(c.row, c.invalid);
      } else if (c.t === 'duplicate') {
        counts.duplicates++;
        if (unsent.has(c.of)) overBudget++;
      } else if (c.t === 'cached' && c.answer?.unconfirmed) {
        counts.marked++;
      } else if (c.t === 'cached' && c.answer && deps.inEarlierJob?.(c.answer)) {
        counts.inJobs++;
      } else if (c.t === 'cached' && (c.answer || !resumed)) counts.cached++;
      else if (c.t === 'cached') {
        // Taken from the cache by an earlier attempt, and gone from it since: sent again.
        const gone = resumed!.gone(c.row.index);
        counts.sent += gone.sent;
        counts.batches += gone.posts;
        if (!gone.sent) unsent.add(c.row.index);
        overBudget += gone.over;
      } else if (c.t === 'send') counts.sent++;
      else if (c.t === 'over-budget') {
        unsent.add(c.row.index);
        overBudget++;
      }
    }
    await rejects?.close();
  } catch (err) {
    await rejects?.abort();
    throw err;
  }
  if (resumed) counts.batches += Math.ceil(resumed.refills() / run.batchSize);
  const { rows, invalid, duplicates, cached, marked, inJobs, batches, sent } = counts;
  return {
    mapping: run.mapping,
    names: { ...run.names },
    samples: { ...run.samples },
    rows,
    valid: rows - invalid,
    invalid,
    duplicates,
    cached,
    unconfirmed_earlier: marked,
    earlier_jobs: inJobs,
    sent,
    over_budget: overBudget,
    batches,
    max_credits: sent * run.creditsPerRow,
    ...(resumed ? { resume: resumed.plan } : {}),
  };
}

/** A batch new to the run: posted, its rows sent (they took their credits as classified). */
const newBatch = (rows: number) => ({ posts: rows > 0 ? 1 : 0, notSent: 0, over: 0 });

/**
 * Counts what a resume does with each batch the classification rebuilds, and with the rows an
 * earlier attempt took from the cache whose answers are gone (refill.ts).
 */
function resumeCounter(resume: PlanResume, budget: Budget) {
  const { state, mayResend } = resume;
  const plan: ResumePlan = {
    startedAt: state.header.at,
    finished: state.done !== undefined,
    answered: 0,
    inJobs: 0,
    unconfirmed: 0,
    expired: 0,
    resent: 0,
  };
  // The refill batches an earlier attempt journaled: by row, and their sizes; each decided once.
  const refilled = new Map<number, string>();
  const refillRows = new Map<string, number>();
  const refillFates = new Map<string, ReturnType<typeof journaled>>();
  for (const r of state.refills ?? []) {
    refillRows.set(r.batch, r.rows.length);
    for (const row of r.rows) refilled.set(row, r.batch);
  }
  let newRefills = 0;
  /** Rows of a journaled batch `id` (`rows` of them): posts, rows not sent, rows over the limit. */
  const journaled = (id: string, rows: number) => {
    const got = { posts: 0, notSent: 0, over: 0 };
    const count = (batchId: string, n: number, state: BatchState | undefined) => {
      const fate = journaledFate(state, mayResend);
      if (fate === 'split') {
        const size = state!.splitSize!;
        for (let k = 0; k * size < n; k++)
          count(
            `${batchId}.${k}`,
            Math.min(size, n - k * size),
            resume.state.batches.get(`${batchId}.${k}`),
          );
        return;
      }
      if (fate === 'new' || fate === 'resend') {
        // Sent again as journaled (a part of a split one, too): its credits are taken just
        // before its POST, all or none.
        if (takeCredits(budget, n)) {
          got.posts++;
          plan.resent += n;
          return;
        }
        got.over += n;
      } else if (fate === 'answered') plan.answered += n;
      else if (fate === 'job') plan.inJobs += n;
      else if (fate === 'unconfirmed') plan.unconfirmed += n;
      else plan.expired += n;
      got.notSent += n;
    };
    count(id, rows, state.batches.get(id));
    return got;
  };
  return {
    plan,
    batch(id: string, rows: number) {
      // A batch new to the journal took its rows' credits as they were classified.
      return state.batches.has(id) ? journaled(id, rows) : newBatch(rows);
    },
    /**
     * A row whose cached answer is gone: sent again (`sent` 1) or not (`over` 1 past the limit);
     * `posts` counts the batch it goes in once (a refill batch an earlier attempt journaled).
     */
    gone(index: number): { sent: number; over: number; posts: number } {
      const refill = refilled.get(index);
      if (refill !== undefined && state.batches.has(refill)) {
        const seen = refillFates.get(refill);
        const got = seen ?? journaled(refill, refillRows.get(refill) ?? 1);
        refillFates.set(refill, got);
        const sent = got.posts > 0 ? 1 : 0;
        return { sent, over: got.over > 0 ? 1 - sent : 0, posts: seen ? 0 : got.posts };
      }
      if (affordableRows(budget) < 1) return { sent: 0, over: 1, posts: 0 };
      budget.left -= budget.perRow;
      plan.resent++;
      newRefills++;
      return { sent: 1, over: 0, posts: 0 };
    },
    /** Rows of refill batches new to the journal (cut into batches of the run's size). */
    refills: () => newRefills,
  };
}
