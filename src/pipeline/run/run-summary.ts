import type { LeafResult } from './batch-task.js';
import { isDateTime } from '../../contract/rules.js';
import type { JoinStats } from '../join/join-writer.js';

/** What a run did. `exitCode` follows DESIGN.md section 4. */
export interface RunSummary extends JoinStats {
  runKey: string;
  journal: string;
  resumed: boolean;
  rows: number;
  valid: number;
  duplicates: number;
  jobs: {
    total: number;
    spooled: number;
    failed: number;
    expired: number;
    pending: number;
    unsent: number;
    ids: string[];
    /** When the first still-pending job's results expire (epoch ms), when known: the re-run must come before. */
    pendingExpire: number | null;
  };
  requests: { submits: number; polls: number };
  creditsCharged: number;
  remainingCredits: number | null;
  written: boolean;
  /**
   * The first row (0-based) the join wrote in a second pass over the input, or null when
   * every row was written in one pass as its batch came back (see stream-join.ts).
   */
  secondPassFrom: number | null;
  stopReason?: { code: string; message: string };
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
export function emptyStats(): JoinStats {
  return {
    statuses: { enriched: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    fill: {},
    outputRows: 0,
  };
}

// Which reason to stop a run says most about it: a key that is refused, then a service
// that cannot be reached, then credits; any of them over a reason without a rank.
const STOP_RANK: Record<string, number> = {
  AUTH_INVALID: 3,
  AUTH_FORBIDDEN: 3,
  NETWORK: 2,
  TIMEOUT: 2,
  SERVER_ERROR: 2,
  RATE_LIMITED: 2,
  CREDITS_EXHAUSTED: 1,
};

/**
 * The run's stop reason after another one: the first, unless the new one ranks higher
 * (every POST failing on the network after --max-credits was reached is exit 6, not 5).
 */
export function strongerStop<T extends { code: string }>(current: T | undefined, next: T): T {
  if (!current) return next;
  return (STOP_RANK[next.code] ?? 0) > (STOP_RANK[current.code] ?? 0) ? next : current;
}

/** The exit code of a finished run (DESIGN.md section 4). */
export function exitCodeFor(
  stats: JoinStats,
  jobs: RunSummary['jobs'],
  stop: { code: string } | undefined,
): number {
  if (stop && (stop.code === 'AUTH_INVALID' || stop.code === 'AUTH_FORBIDDEN')) return 4;
  if (
    stop &&
    ['NETWORK', 'TIMEOUT', 'SERVER_ERROR', 'RATE_LIMITED'].includes(stop.code) &&
    jobs.spooled === 0
  )
    return 6;
  if (stop?.code === 'CREDITS_EXHAUSTED') return 5;
  if (jobs.failed + jobs.expired + jobs.pending + jobs.unsent > 0 || stats.statuses.expired > 0)
    return 3;
  return 0;
}
