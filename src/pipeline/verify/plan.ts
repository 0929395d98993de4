import type { RunState } from '../journal/journal.js';
import type { CachePolicy, ResultsCache, RunWords } from '../types.js';
import { addressOfCell } from './address.js';
import { outcomeOfCache, outcomeOfJournal } from './prior.js';
import type { VerifyRun } from './types.js';

/** What a verification run would do, sent nothing: `--dry-run`. */
export interface VerifyPlan {
  column: string;
  rows: number;
  /** Rows holding an address the email rule takes, rows holding something else, empty rows. */
  valid: number;
  invalid: number;
  empty: number;
  /** Rows the reader could not take whole (too many or too few cells): invalid, never sent. */
  malformed: number;
  /** Distinct addresses, rows repeating one, and addresses the results cache answers. */
  addresses: number;
  duplicates: number;
  cached: number;
  /**
   * Addresses an enrich run sent and never got the answer to (a mark in the results cache):
   * not sent, their rows end `failed` (unless --resend-unconfirmed).
   */
  unconfirmedEarlier: number;
  /** Addresses sent: every one neither cached nor past the spending limit (`maxCredits` of the run). */
  sent: number;
  /** Rows whose address the spending limit leaves unsent (they end `failed`), duplicates included. */
  overBudget: number;
  /** The most this run could spend: one verification credit per address sent. */
  maxCredits: number;
  /** The earlier attempt of this run the run would resume (its journal), if any. */
  resume?: VerifyResumePlan;
}

/** What the resume takes from an earlier attempt's journal, in distinct addresses. */
export interface VerifyResumePlan {
  /** When that attempt started (ms since the epoch). */
  startedAt: number;
  /** Whether it wrote its output. */
  finished: boolean;
  /** Addresses it journaled a verdict for: written from the journal, not sent again. */
  answered: number;
  /** Addresses it sent with no answer (they may have been charged): not sent again, they end `failed`. */
  unconfirmed: number;
  /** Addresses the service refused as no address: not sent again. */
  refused: number;
}

/** The journal of the verification run a real run would resume (`--resend-unconfirmed` or not). */
export interface VerifyPlanResume {
  state: RunState;
  resendUnconfirmed: boolean;
  words: RunWords;
}

/**
 * Reads the input once and counts what would be sent (nothing is): as a new run does, the
 * addresses the results cache does not answer, in the order they first appear, until the
 * run's spending limit.
 */
export async function planVerify(
  run: Pick<
    VerifyRun,
    'source' | 'column' | 'columnName' | 'maxCredits' | 'resendUnconfirmed' | 'words'
  >,
  cache: { cache: ResultsCache | undefined; policy: CachePolicy },
  now: number,
  resume?: VerifyPlanResume,
): Promise<VerifyPlan> {
  const plan: VerifyPlan = {
    column: run.columnName,
    rows: 0,
    valid: 0,
    invalid: 0,
    empty: 0,
    malformed: 0,
    addresses: 0,
    duplicates: 0,
    cached: 0,
    unconfirmedEarlier: 0,
    sent: 0,
    overBudget: 0,
    maxCredits: 0,
  };
  const limit = run.maxCredits ?? Infinity;
  const resumed: VerifyResumePlan | undefined = resume && {
    startedAt: resume.state.header.at,
    finished: resume.state.done !== undefined,
    answered: 0,
    unconfirmed: 0,
    refused: 0,
  };
  // Each distinct address, and whether the limit leaves it unsent (so its duplicates too).
  const seen = new Map<string, boolean>();
  for await (const row of run.source.rows()) {
    plan.rows++;
    if (row.error) {
      plan.malformed++;
      continue;
    }
    const cell = addressOfCell(row.cells[run.column]);
    if (cell.kind === 'empty') plan.empty++;
    if (cell.kind !== 'address') {
      if (cell.kind !== 'empty') plan.invalid++;
      continue;
    }
    plan.valid++;
    const unsent = seen.get(cell.address);
    if (unsent !== undefined) {
      plan.duplicates++;
      if (unsent) plan.overBudget++;
      continue;
    }
    // Settled by the earlier attempt's journal first, as the run settles it (outcomes.ts).
    const prior = resumed && priorOf(cell.address, resume!, resumed, cache.cache);
    if (prior) {
      seen.set(cell.address, false);
      continue;
    }
    const hit = outcomeOfCache(cell.address, cache.cache, cache.policy, now, {
      resend: run.resendUnconfirmed,
      words: run.words,
    });
    const cached = hit !== undefined;
    const over = !cached && plan.sent >= limit;
    seen.set(cell.address, over);
    if (hit?.unconfirmed) plan.unconfirmedEarlier++;
    else if (cached) plan.cached++;
    else if (over) plan.overBudget++;
    else plan.sent++;
  }
  plan.addresses = seen.size;
  plan.maxCredits = plan.sent;
  return resumed ? { ...plan, resume: resumed } : plan;
}

/** Counts what an earlier attempt's journal settles `address` as (true), or false: it is to be sent. */
function priorOf(
  address: string,
  resume: VerifyPlanResume,
  into: VerifyResumePlan,
  cache: ResultsCache | undefined,
): boolean {
  const known = resume.state.verify?.get(address);
  const prior = outcomeOfJournal(address, known, resume.resendUnconfirmed, resume.words, cache);
  if (!prior) return false;
  if (prior.kind === 'answered') into.answered++;
  else if (prior.kind === 'refused') into.refused++;
  else into.unconfirmed++;
  return true;
}
