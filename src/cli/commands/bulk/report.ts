import { formatDuration } from '../../../config/duration.js';
import type { RunSummary } from '../../../pipeline/run/run.js';

/** The JSON summary of a bulk run (stdout with `-o` and `--json`). */
export function summaryJson(s: RunSummary, elapsedMs: number): Record<string, unknown> {
  return {
    rows: s.rows,
    statuses: s.statuses,
    duplicates: s.duplicates,
    cache: { hits: s.cacheHits, credits_saved: s.creditsSaved },
    jobs: {
      total: s.jobs.total,
      done: s.jobs.spooled,
      failed: s.jobs.failed,
      expired: s.jobs.expired,
      pending: s.jobs.pending,
      ids: s.jobs.ids,
    },
    not_sent_batches: s.jobs.unsent,
    unconfirmed: { batches: s.jobs.unconfirmed, rows: s.unconfirmedRows },
    credits_charged: s.creditsCharged,
    remaining_credits: s.remainingCredits,
    requests: s.requests,
    fill_rate: fillRates(s),
    elapsed_ms: Math.round(elapsedMs),
    resumed: s.resumed,
    stopped: s.stopReason ? { code: s.stopReason.code, message: s.stopReason.message } : null,
    exit_code: s.exitCode,
  };
}

function fillRates(s: RunSummary): Record<string, number> {
  const enriched = s.statuses.enriched;
  return Object.fromEntries(
    Object.entries(s.fill).map(([col, n]) => [
      col,
      enriched ? Math.round((n / enriched) * 1000) / 1000 : 0,
    ]),
  );
}

/** Fill rates grouped by percentage, best first: `100% email, title; 0% mobile_phone`. */
export function fillLine(rates: Record<string, number>, prefix: string): string {
  const groups = new Map<number, string[]>();
  for (const [col, r] of Object.entries(rates)) {
    const pct = Math.round(r * 100);
    const name = col.startsWith(prefix) ? col.slice(prefix.length) : col;
    groups.set(pct, [...(groups.get(pct) ?? []), name]);
  }
  return [...groups.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([pct, cols]) => `${pct}% ${cols.join(', ')}`)
    .join('; ');
}

/** The human summary of a bulk run (stderr). */
export function summaryText(s: RunSummary, elapsedMs: number, prefix: string): string {
  const st = s.statuses;
  const lines = [
    `rows: ${s.rows}  enriched: ${st.enriched}  failed: ${st.failed}  invalid: ${st.invalid}  missing: ${st.missing}  expired: ${st.expired}`,
    `duplicates sent once: ${s.duplicates}  jobs: ${s.jobs.spooled}/${s.jobs.total} done${s.resumed ? ' (resumed)' : ''}  credits charged: ${s.creditsCharged}  remaining: ${s.remainingCredits ?? 'unknown'}  time: ${formatDuration(elapsedMs)}`,
  ];
  if (s.cacheHits > 0)
    lines.push(
      `from the results cache: ${s.cacheHits} row(s), not sent  credits saved: ${s.creditsSaved}`,
    );
  if (s.statuses.enriched > 0) lines.push(`fill rate: ${fillLine(fillRates(s), prefix)}`);
  if (s.stopReason) lines.push(`stopped early: ${s.stopReason.message}`);
  return lines.join('\n');
}
