import { openRejects } from '../join/rejects.js';
import type { ResolvedMapping } from '../mapping/resolve-mapping.js';
import type { ResolvedRun, ResultsCache } from '../types.js';
import { cacheLookup } from './cache-use.js';
import { classifyRows } from './classify.js';

/** What a bulk run would do; counts follow DESIGN.md section 4 (`max_credits` is the worst case). */
export interface Plan extends ResolvedMapping {
  rows: number;
  valid: number;
  invalid: number;
  duplicates: number;
  /** Rows the results cache answers (never sent, nothing charged). */
  cached: number;
  batches: number;
  max_credits: number;
}

/**
 * The plan of a resolved run without sending anything: every row through the run's own
 * classification (so the plan is the run's plan), counted; invalid rows go to `rejects`.
 */
export async function planBulk(
  run: ResolvedRun,
  deps: { cache?: ResultsCache; now?: () => number } = {},
): Promise<Plan> {
  const cache = cacheLookup(deps.cache, run.cache, deps.now ?? Date.now);
  const rejects = run.output.rejects
    ? await openRejects(run.source, run.output.rejects)
    : undefined;
  const counts = { rows: 0, valid: 0, invalid: 0, duplicates: 0, cached: 0, batches: 0, toSend: 0 };
  try {
    for await (const c of classifyRows(run, run.source.rows(), cache ? { cache } : {})) {
      if (c.t === 'hits') continue;
      if (c.t === 'batch') counts.batches++;
      else counts.rows++;
      if (c.t === 'invalid') {
        counts.invalid++;
        await rejects?.write(c.row, c.invalid);
      } else if (c.t === 'duplicate') counts.duplicates++;
      else if (c.t === 'cached') counts.cached++;
      else if (c.t === 'send') counts.toSend++;
    }
    await rejects?.close();
  } catch (err) {
    await rejects?.abort();
    throw err;
  }
  const { rows, invalid, duplicates, cached, batches, toSend } = counts;
  return {
    mapping: run.mapping,
    names: { ...run.names },
    samples: { ...run.samples },
    rows,
    valid: rows - invalid,
    invalid,
    duplicates,
    cached,
    batches,
    max_credits: toSend * run.creditsPerRow,
  };
}
