import { openRejects } from '../join/rejects.js';
import type { ResolvedMapping } from '../mapping/resolve-mapping.js';
import type { ResolvedRun, ResultsCache } from '../types.js';
import { createBudget } from './budget.js';
import { cacheLookup } from './cache-use.js';
import { classifyRows } from './classify.js';

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
  /** Rows sent (each distinct request once), within the spending limit. */
  sent: number;
  /** Rows the spending limit leaves unsent (they end `failed`), their duplicates included. */
  over_budget: number;
  /** Batches the rows sent make. */
  batches: number;
  /** The worst case for the rows sent: one credit per contact, `top` per company. */
  max_credits: number;
}

/**
 * The plan of a resolved run without sending anything: every row through the run's own
 * classification and spending limit (so the plan is the run's plan), counted; invalid rows go
 * to `rejects`.
 */
export async function planBulk(
  run: ResolvedRun,
  deps: { cache?: ResultsCache; now?: () => number } = {},
): Promise<Plan> {
  const cache = cacheLookup(deps.cache, run.cache, deps.now ?? Date.now);
  const budget = createBudget(run.maxCredits, run.creditsPerRow);
  const rejects = run.output.rejects
    ? await openRejects(run.source, run.output.rejects, run.kind)
    : undefined;
  const counts = { rows: 0, invalid: 0, duplicates: 0, cached: 0, batches: 0, sent: 0 };
  // The rows past the limit: their duplicates share their fate (not sent) in the run.
  const unsent = new Set<number>();
  let overBudget = 0;
  try {
    for await (const c of classifyRows(run, run.source.rows(), {
      budget,
      ...(cache ? { cache } : {}),
    })) {
      if (c.t === 'hits') continue;
      if (c.t === 'batch') counts.batches++;
      else counts.rows++;
      if (c.t === 'invalid') {
        counts.invalid++;
        await rejects?.write(c.row, c.invalid);
      } else if (c.t === 'duplicate') {
        counts.duplicates++;
        if (unsent.has(c.of)) overBudget++;
      } else if (c.t === 'cached') counts.cached++;
      else if (c.t === 'send') counts.sent++;
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
  const { rows, invalid, duplicates, cached, batches, sent } = counts;
  return {
    mapping: run.mapping,
    names: { ...run.names },
    samples: { ...run.samples },
    rows,
    valid: rows - invalid,
    invalid,
    duplicates,
    cached,
    sent,
    over_budget: overBudget,
    batches,
    max_credits: sent * run.creditsPerRow,
  };
}
