import { formatDuration } from '../../../config/duration.js';
import { budgetReached } from '../../../pipeline/run/messages.js';
import type { RunSummary } from '../../../pipeline/run/run.js';
import type { FileFormat } from '../../../io/file-format.js';
import { Paths, type BulkKind } from '../../../contract/paths.js';
import { baseUrlHint } from '../../report-error.js';
import { CLI_WORDS } from './resolve.js';
import { printable } from '../../output.js';

/** The JSON summary of a bulk run (stdout with `-o` and `--json`). */
export function summaryJson(s: RunSummary, elapsedMs: number): Record<string, unknown> {
  return {
    rows: s.rows,
    statuses: s.statuses,
    duplicates: s.duplicates,
    cache: {
      hits: s.cacheHits,
      credits_saved: s.creditsSaved,
      gone: s.cacheGone,
      resent: s.cacheResent,
      held_elsewhere: s.heldOut,
      unconfirmed: s.unconfirmedEarlier,
    },
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
  if (s.stopReason) lines.push(`stopped early: ${printable(s.stopReason.message)}`);
  return lines.join('\n');
}

/**
 * What a run writing to stdout says when its reader went away (`| head`): the jobs the service
 * had accepted are charged, and the same command writing to a file resumes the run, downloading
 * their answers without sending them again. Empty when it accepted none.
 */
export function closedOutputNote(accepted: number, command: string, format: FileFormat): string {
  if (accepted === 0) return '';
  const jobs = accepted === 1 ? '1 job' : `${accepted.toLocaleString('en-US')} jobs`;
  return `enrich: the service had accepted ${jobs} of this run (their rows may be charged); the journal keeps them: the same command writing to a file downloads their answers without sending them again:\n  ${command} -o enriched.${format}\n`;
}

/**
 * What to run next after a run that stopped early (exit 3, 5, 6), on stderr; empty when
 * there is nothing to pick up. `by` is "before <date>" when a job's results expire.
 */
export function resumeHints(
  s: RunSummary,
  command: string,
  by: string,
  maxCredits: number | undefined,
  kind: BulkKind,
): string {
  if (s.exitCode === 3) return partialHints(s, command, by);
  const stop = s.stopReason;
  if (stop?.code === 'API_NOT_FOUND') return `hint: ${baseUrlHint(Paths[kind])}\n`;
  if (s.exitCode === 5 && stop && stop.message === budgetReached(CLI_WORDS, maxCredits))
    return `enrich: ${stop.message}: the rows not sent end "failed" (not sent). Each run spends up to --max-credits more; run the same command again to send the next rows (a larger --max-credits sends more at once):\n  ${command}\n`;
  if (s.exitCode === 5)
    return `enrich: the account ran out of credits; batches already answered are kept. After a top-up, the same command sends only the rows that came back "out of credits"${by}:\n  ${command}\n`;
  if (s.exitCode === 6 && stop?.code === 'RATE_LIMITED')
    return `enrich: the service refused more requests for now (429 Too Many Requests); the journal is saved. Once the wait it asked for is over, resume${by} with:\n  ${command}\n`;
  if (s.exitCode === 6)
    return `enrich: the service is out of reach or unavailable; the journal is saved. Once it answers again, resume${by} with:\n  ${command}\n`;
  return '';
}

function partialHints(s: RunSummary, command: string, by: string): string {
  let text = '';
  // Only jobs that failed, are still running or were never sent come back on a re-run:
  // expired results are gone, and running the same command again would not change them.
  const resume = s.jobs.failed + s.jobs.pending + s.jobs.unsent > 0;
  if (resume) text += `enrich: some rows are not done; resume${by} with:\n  ${command}\n`;
  if (s.unconfirmedRows > 0)
    text += `enrich: ${s.unconfirmedRows} row(s) in ${s.jobs.unconfirmed} batch(es) were sent, but the service never confirmed them: it may have received and charged them, and it does not show that it honours idempotency keys, so they are not sent again by themselves. To send them again (which may charge them twice):\n  ${command} --resend-unconfirmed\n`;
  // Only an answer that went while the run ran (a resume sends the others itself, refill.ts).
  if (s.cacheGone > 0 && !resume)
    text += `enrich: ${s.cacheGone} row(s) were not sent: an earlier attempt of this run took them from the results cache, and their answers went while this run ran (the cache was cleared or pruned meanwhile); running the same command again sends them (and pays for them):\n  ${command}\n`;
  if (s.heldOut > 0 && !resume)
    text += `enrich: ${s.heldOut} row(s) were not sent: another enrich process was still looking them up when this run's time was up; running the same command again takes their answers from the results cache (or sends them, if none came):\n  ${command}\n`;
  if (s.unconfirmedEarlier > 0)
    text += `enrich: ${s.unconfirmedEarlier} row(s) were not sent: an enrich run (of this file or another) sent them and never got their answer, so the service may have charged them, and they are not sent again by themselves. To send them again (which may charge them twice):\n  ${command} --resend-unconfirmed\n`;
  if (s.statuses.expired > 0)
    text += `enrich: ${s.statuses.expired} row(s) expired: their results were deleted before they were downloaded, and running the same command again will not bring them back; --restart runs the whole file again (paying for every row again)\n`;
  return text;
}
