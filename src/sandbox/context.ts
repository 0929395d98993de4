import type { Bucket } from './rate-limit.js';
import type { Store } from './store.js';
import type { Faults, SandboxStats } from './types.js';

/** Options after defaults were applied. */
export interface ResolvedOptions {
  host: string;
  port: number;
  credits: number;
  verificationCredits: number;
  jobMs: number;
  /** A job takes jobMs plus this per input record. */
  recordMs: number;
  /** Jobs one account's jobs are processed at once; later ones queue (0: no limit). */
  parallelJobs: number;
  ttlMs: number;
  rateLimit: number;
  maxBatch: number;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  seed: number;
  /** Per-account caps on what is stored (see SandboxOptions). */
  maxJobsPerAccount: number;
  maxStoredBytesPerAccount: number;
  maxUnpaidBytesPerAccount: number;
  stateCompactBytes: number;
  stateDir: string | undefined;
  /** Keep only api-spec.md's promises (see SandboxOptions.specOnly). */
  specOnly: boolean;
}

/** The state every handler works on. */
export interface SandboxContext {
  readonly options: ResolvedOptions;
  readonly store: Store;
  /** The sandbox clock (base clock + admin advance), epoch ms. */
  now(): number;
  faults: Faults;
  /** Seeded randomness for faults and shuffles. */
  random: () => number;
  readonly buckets: Map<string, Bucket>;
  readonly stats: SandboxStats;
  /** The first account (the one whose key `enrich sandbox` prints). */
  firstAccountId: string;
  baseUrl: string;
  /**
   * Resolves once every change made so far is on disk (at once without --state): an answer
   * that acknowledges a change is sent only after it.
   */
  persisted(): Promise<void>;
}

/** A reply before it is written (so faults can truncate or drop it). */
export interface Reply {
  status: number;
  /** An object to serialise, or JSON text already serialised. */
  body: unknown;
  headers?: Record<string, string>;
}

/** Zeroed counters for GET /_sandbox/stats. */
export function newStats(): SandboxStats {
  return {
    jobs_submitted: 0,
    records_submitted: 0,
    credits_charged: 0,
    verification_credits_charged: 0,
    requests_by_status: {},
    requests_by_path: {},
  };
}

/** Adds one to a counter of a null-prototype-free record (keys come from our own route names). */
export function bump(counters: Record<string, number>, key: string): void {
  counters[key] = (counters[key] ?? 0) + 1;
}
