import { formatDuration } from '../config/duration.js';
import { isoSecond } from '../pipeline/run/poll.js';
import type { JobEvent, RunProgress } from '../pipeline/types.js';
import type { VerifyProgress } from '../pipeline/verify/types.js';

/** How much of the run is done (0..1), once it can be told; undefined while the total is unknown. */
export function shareDone(p: RunProgress): number | undefined {
  if (p.phase === 'writing')
    return p.rowsRead > 0 ? Math.min(1, p.rowsWritten / p.rowsRead) : undefined;
  // Reading, the number of jobs is not known yet: more rows may make more of them.
  if (p.phase === 'reading' || p.jobsTotal === 0) return undefined;
  return Math.min(1, (p.jobsDone + (p.jobsRunning ?? 0)) / p.jobsTotal);
}

/** The share done and the time left, as far as they can be estimated. */
export interface Estimate {
  share?: number;
  leftMs?: number;
}

/** An ETA needs this much time and progress seen in the phase, or it only guesses. */
const ETA_AFTER_MS = 3000;
const ETA_AFTER_SHARE = 0.01;

/**
 * Estimates the share done and the time left from the shares seen so far: the rate since the
 * phase's first known share. The share never goes back within a phase (a job counted done a
 * moment before its running share is dropped would make it dip).
 */
export function createShareEstimator(): (
  phase: string,
  seen: number | undefined,
  now: number,
) => Estimate {
  let current: string | undefined;
  let from: { at: number; share: number } | undefined;
  let best = 0;
  return (phase, seen, now) => {
    if (phase !== current) {
      current = phase;
      from = undefined;
      best = 0;
    }
    if (seen === undefined) return {};
    best = Math.max(best, seen);
    from ??= { at: now, share: best };
    const gained = best - from.share;
    if (best >= 1 || now - from.at < ETA_AFTER_MS || gained < ETA_AFTER_SHARE)
      return { share: best };
    return { share: best, leftMs: ((now - from.at) * (1 - best)) / gained };
  };
}

/** The estimator of a bulk run: its share done by phase (shareDone). */
export function createEstimator(): (p: RunProgress, now: number) => Estimate {
  const estimate = createShareEstimator();
  return (p, now) => estimate(p.phase, shareDone(p), now);
}

const n = (x: number) => x.toLocaleString('en-US');

/**
 * One progress line: `waiting for results: 25 rows, jobs 0/1, credits 0, 12.0s, 40% done, about
 * 18s left`; rows are written while jobs still run (as their batches end): `…rows, 12,000 written, jobs…`.
 */
export function describe(p: RunProgress, elapsedMs: number, est: Estimate = {}): string {
  const what =
    p.phase === 'reading'
      ? `reading: ${n(p.rowsRead)} rows`
      : p.phase === 'waiting'
        ? `waiting for results: ${n(p.rowsRead)} rows`
        : `writing: ${n(p.rowsWritten)} of ${n(p.rowsRead)} rows`;
  const parts = [what];
  if (p.phase !== 'writing' && p.rowsWritten > 0) parts.push(`${n(p.rowsWritten)} written`);
  parts.push(`jobs ${n(p.jobsDone)}/${n(p.jobsTotal)}`);
  if (p.jobsNotFound) parts.push(`${n(p.jobsNotFound)} not found yet (404)`);
  if (p.rowsHeldElsewhere)
    parts.push(`waiting for ${n(p.rowsHeldElsewhere)} row(s) another enrich process is sending`);
  parts.push(`credits ${n(p.creditsCharged)}`);
  return withTime(parts, elapsedMs, est);
}

/** The clock, the share done and the time left after a line's counters. */
function withTime(parts: string[], elapsedMs: number, est: Estimate): string {
  parts.push(formatDuration(elapsedMs));
  if (est.share !== undefined) parts.push(`${Math.floor(est.share * 100)}% done`);
  if (est.leftMs !== undefined) parts.push(`about ${leftText(est.leftMs)} left`);
  return parts.join(', ');
}

/**
 * `enrich verify-emails`'s progress line: `verifying: 10,000 rows, 2,000 written, addresses
 * 1,234/1,240, sent 1,100, credits 1,050, 1m 12s, 20% done, about 4m 50s left`. The rows are
 * the input's once counted (rows read until then); addresses are those with an outcome out
 * of those found so far (the total once every row is read); the share is of rows written.
 */
export function describeVerify(p: VerifyProgress, elapsedMs: number, est: Estimate = {}): string {
  const parts = [`verifying: ${n(p.rowsTotal ?? p.rowsRead)} rows`];
  if (p.rowsWritten > 0) parts.push(`${n(p.rowsWritten)} written`);
  parts.push(`addresses ${n(p.done)}/${n(p.addresses)}`, `sent ${n(p.sent)}`);
  parts.push(`credits ${n(p.creditsCharged)}`);
  return withTime(parts, elapsedMs, est);
}

/** Turns a run's last progress into its line, given the time since it started and the time now. */
export type ProgressText<P> = (p: P, elapsedMs: number, now: number) => string;

/** The lines of one bulk run (with an estimator of its own). */
export function runText(): ProgressText<RunProgress> {
  const estimate = createEstimator();
  return (p, elapsedMs, now) => describe(p, elapsedMs, estimate(p, now));
}

/** The lines of one verification run: its share is of the input's rows written, once counted. */
export function verifyText(): ProgressText<VerifyProgress> {
  const estimate = createShareEstimator();
  return (p, elapsedMs, now) => {
    const share =
      p.rowsTotal === undefined
        ? undefined
        : p.rowsTotal === 0
          ? 1
          : Math.min(1, p.rowsWritten / p.rowsTotal);
    return describeVerify(p, elapsedMs, estimate('verifying', share, now));
  };
}

/** Time left to the second (to 10 s beyond a minute): `18s`, `4m 10s`; an estimate to the millisecond would lie. */
function leftText(ms: number): string {
  const step = ms >= 60_000 ? 10_000 : 1000;
  const left = Math.max(step, Math.round(ms / step) * step);
  return left < 60_000 ? `${left / 1000}s` : formatDuration(left);
}

const ENDED = {
  timeout: 'still running at the deadline (--timeout)',
  expired: 'its results expired',
  failed: 'the download failed',
} as const;

/** `enrich -v`'s line for a job event (stderr); none for a job still running. */
export function jobLine(e: JobEvent): string | undefined {
  switch (e.t) {
    case 'submitted':
      return `enrich: batch ${e.batch}: submitted ${n(e.rows)} rows as job ${e.job}`;
    case 'done':
      return `enrich: batch ${e.batch}: job ${e.job} done: ${n(e.records)} records, ${n(e.credits)} credits charged`;
    case 'retried':
      if (e.reason === 'too-large')
        return `enrich: batch ${e.batch}: the service found its ${n(e.rows)} rows too large; sending them again in two halves`;
      if (e.reason === 'refused')
        return `enrich: batch ${e.batch}: the service refused its ${n(e.rows)} rows (400) without saying which; sending them again in two halves`;
      return `enrich: batch ${e.batch}: sending ${n(e.rows)} rows again that came back out of credits`;
    case 'not-found':
      return `enrich: batch ${e.batch}: job ${e.job} answered 404 (not found); asked again until ${isoSecond(e.until)}`;
    case 'ended':
      return `enrich: batch ${e.batch}: job ${e.job} not downloaded: ${ENDED[e.state]}`;
    default:
      return undefined;
  }
}
