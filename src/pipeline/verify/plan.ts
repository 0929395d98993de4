import type { CachePolicy, ResultsCache } from '../types.js';
import { addressOfCell } from './address.js';
import { outcomeOfCache } from './prior.js';
import type { VerifyRun } from './types.js';

/** What a verification run would do, sent nothing: `--dry-run`. */
export interface VerifyPlan {
  column: string;
  rows: number;
  /** Rows holding an address the email rule takes, rows holding something else, empty rows. */
  valid: number;
  invalid: number;
  empty: number;
  /** Distinct addresses, rows repeating one, and addresses the results cache answers. */
  addresses: number;
  duplicates: number;
  cached: number;
  /** Addresses sent: every one neither cached nor past the spending limit (`maxCredits` of the run). */
  sent: number;
  /** Rows whose address the spending limit leaves unsent (they end `failed`), duplicates included. */
  overBudget: number;
  /** The most this run could spend: one verification credit per address sent. */
  maxCredits: number;
}

/**
 * Reads the input once and counts what would be sent (nothing is): as a new run does, the
 * addresses the results cache does not answer, in the order they first appear, until the
 * run's spending limit.
 */
export async function planVerify(
  run: Pick<VerifyRun, 'source' | 'column' | 'columnName' | 'maxCredits'>,
  cache: { cache: ResultsCache | undefined; policy: CachePolicy },
  now: number,
): Promise<VerifyPlan> {
  const plan: VerifyPlan = {
    column: run.columnName,
    rows: 0,
    valid: 0,
    invalid: 0,
    empty: 0,
    addresses: 0,
    duplicates: 0,
    cached: 0,
    sent: 0,
    overBudget: 0,
    maxCredits: 0,
  };
  const limit = run.maxCredits ?? Infinity;
  // Each distinct address, and whether the limit leaves it unsent (so its duplicates too).
  const seen = new Map<string, boolean>();
  for await (const row of run.source.rows()) {
    plan.rows++;
    const cell = row.error ? undefined : addressOfCell(row.cells[run.column]);
    if (cell?.kind === 'empty') plan.empty++;
    if (cell?.kind !== 'address') {
      if (cell?.kind !== 'empty') plan.invalid++;
      continue;
    }
    plan.valid++;
    const unsent = seen.get(cell.address);
    if (unsent !== undefined) {
      plan.duplicates++;
      if (unsent) plan.overBudget++;
      continue;
    }
    const cached = outcomeOfCache(cell.address, cache.cache, cache.policy, now) !== undefined;
    const over = !cached && plan.sent >= limit;
    seen.set(cell.address, over);
    if (cached) plan.cached++;
    else if (over) plan.overBudget++;
    else plan.sent++;
  }
  plan.addresses = seen.size;
  plan.maxCredits = plan.sent;
  return plan;
}
