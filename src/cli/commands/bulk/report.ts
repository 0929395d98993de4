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
    credits_charged_earlier: s.creditsChargedEarlier,
    charge_unknown_rows: s.chargeUnknownRows,
    remaining_credits: s.remainingCredits,
    remaining_credits_at:
      s.remainingCreditsAt === null ? null : new Date(s.remainingCreditsAt).toISOString(),
    balance: s.balance,
    requests: s.requests,
    fill_rate: fillRates(s),
    elapsed_ms: Math.round(elapsedMs),
    resumed: s.resumed,
    stopped: s.stopReason ? { code: s.stopReason.code, message: s.stopReason.message } : null,
    exit_code: s.exitCode,
  };
}

/** This run's charges, with a resumed job's earlier downloads apart: `36`, `0 (+36 by an earlier run)`. */
function creditsText(s: RunSummary): string {
  const earlier =
    s.creditsChargedEarlier > 0 ? ` (+${s.creditsChargedEarlier} by an earlier run)` : '';
  return `${s.creditsCharged}${earlier}`;
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
    `rows: ${s.rows}  enriched: ${st.enriched}  not found: ${st.not_found}  failed: ${st.failed}  invalid: ${st.invalid}  missing: ${st.missing}  expired: ${st.expired}`,
    `duplicates sent once: ${s.duplicates}  jobs: ${s.jobs.spooled}/${s.jobs.total} done${s.resumed ? ' (resumed)' : ''}  credits charged: ${creditsText(s)}  remaining: ${s.remainingCredits ?? 'unknown'}  time: ${formatDuration(elapsedMs)}`,
  ];
  if (s.chargeUnknownRows > 0)
    lines.push(
      `charge unknown: ${s.chargeUnknownRows} rows were sent and their answer not seen (enrich_credit_charged: unknown); they may have been charged`,
    );
  // Only when the service shows more spent than the records say (a lost answer, or another
  // user of the account): its first figure may already include the first batch's charge.
  if (s.balance && s.balance.drop !== null && s.balance.drop > s.creditsCharged)
    lines.push(
      `balance: ${s.balance.first} -> ${s.balance.last} (-${s.balance.drop}) while the run ran, as the service reported it`,
    );
  if (s.cacheHits > 0)
    lines.push(
      `from the results cache: ${s.cacheHits} row(s), not sent  credits saved: ${s.creditsSaved}`,
    );
  if (s.statuses.enriched > 0) lines.push(`fill rate: ${fillLine(fillRates(s), prefix)}`);
  if (s.stopReason) lines.push(`stopped early: ${s.stopReason.message}`);
  return lines.join('\n');
}
