import { ExitCode, exitCodeOfCode, stopRank } from '../../errors.js';
import type { LeafResult, StopReason } from '../types.js';
import { isDateTime } from '../../contract/rules.js';
import type { JoinStats } from '../join/join-writer.js';
export { chargeUnknownRows } from '../join/join.js';

/** What a run did. `exitCode` follows DESIGN.md section 4. */
export interface RunSummary extends Omit<JoinStats, 'missingSent'> {
  runKey: string;
  journal: string;
  resumed: boolean;
  rows: number;
  valid: number;
  duplicates: number;
  /** Rows answered from the results cache (their duplicates not counted), never sent. */
  cacheHits: number;
  /** What those answers cost when the service gave them: credits this run did not spend. */
  creditsSaved: number;
  /**
   * Rows an earlier attempt of this run took from the results cache whose answer went while
   * this run ran (cache cleared or pruned meanwhile; a resume sends the rows whose answers
   * were gone when it started, `cacheResent`): written `failed`, not sent; the run exits 3,
   * and the same command sends them.
   */
  cacheGone: number;
  /**
   * Rows an earlier attempt of this run took from the results cache whose answer was gone
   * since, sent again (and paid for) by this run, once (refill.ts).
   */
  cacheResent: number;
  /**
   * Rows another enrich process was still sending when this run's time was up (row-claims.ts):
   * written `failed`, not sent; the run exits 3, and the same command takes their answers from
   * the cache (or sends them, if none came).
   */
  heldOut: number;
  /**
   * Rows whose request an enrich run sent without getting its answer (marked in the results
   * cache; it may have been charged): written `failed`, not sent; the run exits 3, and
   * `--resend-unconfirmed` sends them.
   */
  unconfirmedEarlier: number;
  jobs: {
    total: number;
    spooled: number;
    failed: number;
    /** Batches the service may have charged without confirming them (sent again only when asked). */
    unconfirmed: number;
    expired: number;
    pending: number;
    unsent: number;
    ids: string[];
    /** When the first still-pending job's results expire (epoch ms), when known: the re-run must come before. */
    pendingExpire: number | null;
  };
  requests: { submits: number; polls: number };
  /**
   * Credits the records this run downloaded say were charged (`credit_charged`), for jobs this
   * run sent: exact for what came back. Rows whose answer was not seen are `chargeUnknownRows`.
   */
  creditsCharged: number;
  /** Credits of resumed jobs' records that an earlier run downloaded (and reported). */
  creditsChargedEarlier: number;
  /** Rows of batches the service may have charged without confirming them (not sent again by themselves). */
  unconfirmedRows: number;
  /**
   * Rows sent whose charge is not known: unconfirmed, accepted but not downloaded (still
   * running, expired, failed), or left out of their job's answer (missing). Their
   * `enrich_credit_charged` says `unknown`.
   */
  chargeUnknownRows: number;
  /** The last `remaining_credits` the service sent, and when (epoch ms; null: from the journal). */
  remainingCredits: number | null;
  remainingCreditsAt: number | null;
  /**
   * The balance as the service reported it while the run ran: first and last figures and the
   * drop between them (null when it rose: a top-up). The spec has no balance endpoint, so the
   * figure before the run's first charge is not known; the drop also counts anything else
   * that used the account meanwhile.
   */
  balance: { first: number; last: number; drop: number | null } | null;
  written: boolean;
  /**
   * The first row (0-based) the join wrote in a second pass over the input, or null when
   * every row was written in one pass as its batch came back (see stream-join.ts).
   */
  secondPassFrom: number | null;
  stopReason?: StopReason;
  exitCode: number;
}

/** Counts the jobs of a run by how they ended; `expiresOf` gives a batch's journaled expiry. */
export function countJobs(
  leaves: LeafResult[],
  expiresOf: (batch: string) => number | null | undefined = () => null,
): RunSummary['jobs'] {
  // A spooled batch whose credit retry did not finish counts as that retry's job.
  const count = (s: LeafResult['state']) =>
    leaves.filter((l) => l.state === s || l.retry?.state === s).length;
  const pendingExpires = leaves
    .flatMap((l) => [
      ...(l.state === 'pending' ? [l.id] : []),
      ...(l.retry?.state === 'pending' ? [l.retry.batch] : []),
    ])
    .map((batch) => expiresOf(batch))
    .filter(isDateTime);
  return {
    total:
      leaves.filter((l) => l.state !== 'unsent').length +
      leaves.filter((l) => l.retry !== undefined && l.retry.state !== 'unsent').length,
    spooled: count('spooled'),
    failed: count('failed'),
    unconfirmed: count('unconfirmed'),
    expired: count('expired'),
    pending: count('pending'),
    unsent: count('unsent'),
    ids: leaves.flatMap((l) => [
      ...(l.jobId ? [l.jobId] : []),
      ...(l.retry?.jobId ? [l.retry.jobId] : []),
    ]),
    pendingExpire: pendingExpires.length ? Math.min(...pendingExpires) : null,
  };
}

/** Sums a number over the leaves. */
export function sum(leaves: LeafResult[], f: (l: LeafResult) => number): number {
  return leaves.reduce((acc, l) => acc + f(l), 0);
}

/** The lowest remaining-credits figure the service reported (the latest, as credits only go down within a run). */
export function lastRemaining(leaves: LeafResult[]): number | null {
  const known = leaves.map((l) => l.remaining).filter((r): r is number => r !== null);
  return known.length ? Math.min(...known) : null;
}

/** Join statistics of a run that wrote nothing (--no-wait with jobs still running). */
export function emptyStats(): Omit<JoinStats, 'missingSent'> {
  return {
    statuses: { enriched: 0, not_found: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    fill: {},
    outputRows: 0,
  };
}

/**
 * The run's stop reason after another one: the first, unless the new one ranks higher
 * (every POST failing on the network after --max-credits was reached is exit 6, not 5).
 */
export function strongerStop<T extends { code: string }>(current: T | undefined, next: T): T {
  if (!current) return next;
  return stopRank(next.code) > stopRank(current.code) ? next : current;
}

/** The exit code of a finished run (DESIGN.md section 4), from the stop's code and what became of the jobs. */
export function exitCodeFor(
  stats: Pick<JoinStats, 'statuses'>,
  jobs: RunSummary['jobs'],
  stop: { code: string } | undefined,
  cacheGone = 0,
): number {
  const stopExit = stop && exitCodeOfCode(stop.code);
  if (stopExit === ExitCode.auth) return ExitCode.auth;
  // The service refused what was sent (400): running it again would send the same.
  if (stopExit === ExitCode.usage) return ExitCode.usage;
  // A service out of reach is exit 6 only when nothing came back at all.
  if (stopExit === ExitCode.network && jobs.spooled === 0) return ExitCode.network;
  if (stopExit === ExitCode.credits) return ExitCode.credits;
  const unfinished = jobs.failed + jobs.unconfirmed + jobs.expired + jobs.pending + jobs.unsent;
  // Rows written failed that the same command would not send (their cached answer is gone).
  if (unfinished > 0 || stats.statuses.expired > 0 || cacheGone > 0) return ExitCode.partial;
  return ExitCode.ok;
}
