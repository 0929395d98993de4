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
  /** The most this run could spend: one verification credit per address to send. */
  maxCredits: number;
}

/** Reads the input once and counts what would be sent (nothing is). */
export async function planVerify(
  run: Pick<VerifyRun, 'source' | 'column' | 'columnName'>,
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
    maxCredits: 0,
  };
  const seen = new Set<string>();
  for await (const row of run.source.rows()) {
    plan.rows++;
    const cell = row.error ? undefined : addressOfCell(row.cells[run.column]);
    if (cell?.kind === 'empty') plan.empty++;
    if (cell?.kind !== 'address') {
      if (cell?.kind !== 'empty') plan.invalid++;
      continue;
    }
    plan.valid++;
    if (seen.has(cell.address)) {
      plan.duplicates++;
      continue;
    }
    seen.add(cell.address);
    if (outcomeOfCache(cell.address, cache.cache, cache.policy, now)) plan.cached++;
  }
  plan.addresses = seen.size;
  plan.maxCredits = plan.addresses - plan.cached;
  return plan;
}
