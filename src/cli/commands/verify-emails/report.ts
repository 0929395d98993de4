import { formatDuration } from '../../../config/duration.js';
import type { VerifyPlan, VerifySummary } from '../../../bulk/verify-emails.js';
import { printable } from '../../output.js';
import { printable as escaped } from '../bulk/dry-run.js';
import type { VerifyResumePlan } from '../../../pipeline/verify/plan.js';

const n = (x: number) => x.toLocaleString('en-US');

/** The JSON summary of a verification run (stdout with `-o` and `--json`). */
export function verifySummaryJson(s: VerifySummary, elapsedMs: number): Record<string, unknown> {
  return {
    rows: s.rows,
    statuses: s.statuses,
    verdicts: s.verdicts,
    not_an_address: s.notAnAddress,
    no_address: s.noAddress,
    malformed_rows: s.malformed,
    addresses: s.addresses,
    duplicates: s.duplicates,
    cache: { hits: s.cacheHits, credits_saved: s.creditsSaved },
    answered_earlier: s.answeredEarlier,
    sent: s.sent,
    credits_charged: s.creditsCharged,
    unconfirmed: s.unconfirmed,
    failed: s.failed,
    not_sent: s.notSent,
    remaining_credits: s.remainingCredits,
    balance: s.balance,
    elapsed_ms: Math.round(elapsedMs),
    resumed: s.resumed,
    stopped: s.stopReason ? { code: s.stopReason.code, message: s.stopReason.message } : null,
    exit_code: s.exitCode,
  };
}

/** The human summary of a verification run (stderr). */
export function verifySummaryText(s: VerifySummary, elapsedMs: number): string {
  const v = s.verdicts;
  const st = s.statuses;
  const lines = [
    `rows: ${n(s.rows)}  valid: ${n(v.valid)}  invalid: ${n(v.invalid)}  unknown: ${n(v.unknown)}  (not an address: ${n(s.notAnAddress)})  no address: ${n(s.noAddress)}${s.malformed > 0 ? `  malformed rows: ${n(s.malformed)}` : ''}  not verified: ${n(st.failed)}`,
    `addresses: ${n(s.addresses)} distinct  duplicates sent once: ${n(s.duplicates)}  sent: ${n(s.sent)}${s.resumed ? ' (resumed)' : ''}  credits charged: ${n(s.creditsCharged)}  remaining: ${s.remainingCredits ?? 'unknown'}  time: ${formatDuration(elapsedMs)}`,
  ];
  if (s.cacheHits > 0)
    lines.push(
      `from the results cache: ${n(s.cacheHits)} address(es), not sent  credits saved: ${n(s.creditsSaved)}`,
    );
  if (s.answeredEarlier > 0)
    lines.push(
      `answered by an earlier attempt of this run: ${n(s.answeredEarlier)} address(es), not sent again`,
    );
  if (s.balance && s.balance.drop > s.creditsCharged)
    lines.push(
      `balance: ${s.balance.before} -> ${s.balance.after} (-${s.balance.drop}) while the run ran, as the service reported it`,
    );
  if (s.unconfirmed > 0)
    lines.push(
      `charge unknown: ${n(s.unconfirmed)} address(es) were sent and their answer lost; they may have been charged (verify_credit_charged: unknown)`,
    );
  if (s.stopReason) lines.push(`stopped early: ${printable(s.stopReason.message)}`);
  return lines.join('\n');
}

/** The dry run's plan, for people (stdout); with --max-credits, what the run sends within it. */
export function verifyPlanText(p: VerifyPlan, limit: number | undefined): string {
  const lines = [
    // A header cell holding a line break (`"Work\nEmail"`) shows it escaped, as the bulk
    // commands' mapping table does: it cannot break the plan's lines.
    `email column: "${escaped(p.column)}"`,
    `rows: ${n(p.rows)}  with an address: ${n(p.valid)}  not an address: ${n(p.invalid)}  empty: ${n(p.empty)}${p.malformed > 0 ? `  malformed rows: ${n(p.malformed)}` : ''}`,
    `distinct addresses: ${n(p.addresses)}  duplicates: ${n(p.duplicates)}  cached: ${n(p.cached)}  to send: ${n(p.sent)}`,
  ];
  if (p.resume) lines.push(...verifyResumeLines(p.resume));
  if (p.unconfirmedEarlier > 0)
    lines.push(
      `unconfirmed: ${n(p.unconfirmedEarlier)} address(es) an enrich run sent and never got the answer to (they may have been charged): not sent, they end "failed", exit 3 (--resend-unconfirmed sends them)`,
    );
  if (limit !== undefined)
    lines.push(
      `--max-credits ${n(limit)}: ${n(p.overBudget)} row(s) not sent (they end "failed"${p.overBudget > 0 ? ', exit 5' : ''})`,
    );
  lines.push(`worst case: ${n(p.maxCredits)} verification credit(s)`);
  return lines.join('\n');
}

/** The dry run's plan as JSON (stdout with `--json`). */
export function verifyPlanJson(p: VerifyPlan): Record<string, unknown> {
  return {
    column: p.column,
    rows: p.rows,
    valid: p.valid,
    invalid: p.invalid,
    empty: p.empty,
    malformed_rows: p.malformed,
    addresses: p.addresses,
    duplicates: p.duplicates,
    cached: p.cached,
    unconfirmed_earlier: p.unconfirmedEarlier,
    sent: p.sent,
    over_budget: p.overBudget,
    max_credits: p.maxCredits,
    ...(p.resume
      ? {
          resume: {
            started_at: new Date(p.resume.startedAt).toISOString(),
            finished: p.resume.finished,
            answered: p.resume.answered,
            unconfirmed: p.resume.unconfirmed,
            refused: p.resume.refused,
          },
        }
      : {}),
  };
}

/** The plan's lines for a resume: the run resumed, and the addresses its journal settles. */
function verifyResumeLines(r: VerifyResumePlan): string[] {
  const started = new Date(r.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const lines = [
    `resumes the ${r.finished ? '' : 'unfinished '}run of this file started ${started} (its journal): ${n(r.answered)} address(es) answered there, not sent again`,
  ];
  if (r.unconfirmed)
    lines.push(
      `unconfirmed: ${n(r.unconfirmed)} address(es) sent with no answer (they may have been charged): not sent again, they end "failed", exit 3 (--resend-unconfirmed sends them)`,
    );
  if (r.refused)
    lines.push(`refused: ${n(r.refused)} address(es) the service refused: not sent again`);
  return lines;
}
