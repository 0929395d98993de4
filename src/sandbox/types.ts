/** Public types of the sandbox: options, the handle `startSandbox` resolves to, and faults. */

/** Options of `startSandbox` (the CLI `enrich sandbox` maps its flags onto these). */
export interface SandboxOptions {
  /** Port to listen on; 0 picks a free one (default 0). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Enrichment credits of the first account (default 100_000). */
  credits?: number;
  /** Verification credits of the first account (default 10_000). */
  verificationCredits?: number;
  /** How long a bulk job takes before its results are ready, in ms (default 0). */
  jobMs?: number;
  /** Added to a bulk job's time per input record, in ms (default 0): a job of n records takes jobMs + n * recordMs. */
  recordMs?: number;
  /**
   * Most bulk jobs of one account processed at once (default 0: no limit). Later jobs wait
   * in a queue, first come first served: their 202s show `processed: 0` until they start,
   * and their results expire `ttlMs` after they start.
   */
  parallelJobs?: number;
  /** Results lifetime after the job is created, in ms (default 24h). */
  ttlMs?: number;
  /** Requests per second per key (token bucket, burst 2x); 0 or undefined = off. */
  rateLimit?: number;
  /** Most records one bulk submission may hold (default 10_000). */
  maxBatch?: number;
  /** Largest request body accepted, in bytes (default 32 MiB); above it answers 413. */
  maxBodyBytes?: number;
  /** Longest a client may take to send a whole request (headers and body), in ms (default 30 s); then 408 and the socket closes. */
  requestTimeoutMs?: number;
  /** Seed of the synthetic data and of fault randomness (default 1). */
  seed?: number;
  /** Initial faults (same shape as PUT /_sandbox/faults). */
  faults?: Faults;
  /**
   * Directory where accounts, key hashes, jobs and the clock are kept and reloaded from: a log of
   * changes (`sandbox-state.jsonl`), each on disk (fsync) before the answer that acknowledges it.
   */
  stateDir?: string;
  /** Rewrite the --state log once it passes this many bytes and twice what is live (default 64 MiB). */
  stateCompactBytes?: number;
  /** Most unexpired bulk jobs one account may keep; one more answers 429 (default 10_000). */
  maxJobsPerAccount?: number;
  /** Most bytes of unexpired bulk results one account may keep; more answers 429, or 413 for a job larger on its own (default 2 GiB). */
  maxStoredBytesPerAccount?: number;
  /**
   * Most bytes of stored results no credit was paid for (no match, out of credits) one account
   * may keep (default 128 MiB): an empty account cannot fill the sandbox's memory for free.
   */
  maxUnpaidBytesPerAccount?: number;
  /** Base clock in epoch ms; the admin clock advance adds an offset to it. */
  now?: () => number;
  /**
   * Behave as a service that keeps only api-spec.md's promises (default false), so tests show
   * what a client relies on beyond them. In spec-only mode the sandbox:
   * - ignores `Idempotency-Key` (a repeated POST makes a second job and charges again) and
   *   never echoes it;
   * - words in-band record errors and 400 messages otherwise, never with the word "credit"
   *   (e.g. "No data returned: quota reached");
   * - answers bulk submissions with `expiration_date` as a string and bulk results with
   *   `original_fields` as JSON text;
   * - sends no `Retry-After`, no `RateLimit-*` headers, no body on 202; a rate limit is a bare 429;
   * - reports verification credit exhaustion in-band: a 200 `{ email, status: "unknown",
   *   credit_charged: false, remaining_credits: 0, error }` instead of the default mode's 403.
   */
  specOnly?: boolean;
}

/** A running sandbox. */
export interface SandboxHandle {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:43567. */
  url: string;
  /** A key of the first account (shown once). */
  apiKey: string;
  adminToken: string;
  accountId: string;
  /** The operations of the HTTP admin API, in-process. */
  admin: SandboxAdmin;
  /** Stops listening, destroys open sockets and closes the --state log. */
  close(): Promise<void>;
}

/** One key as listed (never the key itself). */
export interface KeyListing {
  id: string;
  name: string;
  description: string;
  account_id: string;
  masked: string;
  revoked: boolean;
  created_at: string;
}

/** Counters of `GET /_sandbox/stats`. */
export interface SandboxStats {
  jobs_submitted: number;
  records_submitted: number;
  credits_charged: number;
  verification_credits_charged: number;
  requests_by_status: Record<string, number>;
  requests_by_path: Record<string, number>;
}

/** Account changes of `PUT /_sandbox/accounts/{id}`. */
export interface AccountUpdate {
  credits?: number;
  verification_credits?: number;
  suspended?: boolean;
}

/** The admin operations (mirrors the HTTP admin API under /_sandbox/). */
/** An account as the admin API shows it. */
export interface AccountView {
  account_id: string;
  credits: number;
  verification_credits: number;
  suspended: boolean;
}

export interface SandboxAdmin {
  createAccount(o?: { credits?: number; verification_credits?: number }): {
    account_id: string;
    api_key: string;
  };
  createKey(o?: { name?: string; description?: string; account_id?: string }): {
    id: string;
    api_key: string;
    name: string;
  };
  listKeys(): KeyListing[];
  revokeKey(id: string): boolean;
  updateAccount(id: string, o: AccountUpdate): void;
  getAccount(id: string): AccountView | undefined;
  /** Every account, oldest first: the first is the one `enrich sandbox` printed a key of. */
  listAccounts(): AccountView[];
  advanceClock(ms: number): void;
  setFaults(f: Faults): void;
  getFaults(): Faults;
  stats(): SandboxStats;
}

/** How an injected 429/503 writes Retry-After. */
export type RetryAfterForm = 'seconds' | 'http-date';

/** One entry of the deterministic fault queue, consumed by one matching request. */
export interface FaultStep {
  /** Answer this status instead of processing. */
  status?: number;
  /** Destroy the socket without answering (or, with `after`, after processing). */
  reset?: boolean;
  after?: boolean;
  /** Process, then send only part of the body. */
  truncate?: boolean;
  /** Delay before answering. */
  delay_ms?: number;
  retry_after?: RetryAfterForm;
  retry_after_s?: number;
  /** Match only requests whose path starts with this. */
  path?: string;
}

/** Faults injected into the seven service endpoints (body of PUT /_sandbox/faults). */
export interface Faults {
  /** Per-request probability of answering a status instead of processing, by status. */
  rates?: Record<string, number>;
  reset_rate?: number;
  reset_after_rate?: number;
  truncate_rate?: number;
  /** Fixed delay, or [min, max] drawn uniformly. */
  latency_ms?: number | [number, number];
  retry_after?: RetryAfterForm;
  retry_after_s?: number;
  shuffle_results?: boolean;
  /** true (= 1) or a rate: bulk result records without custom_fields. */
  drop_custom_fields?: boolean | number;
  /** A rate: bulk result records left out of the results altogether (the caller sees them missing). */
  drop_records?: number;
  /** Limit the random faults to paths starting with one of these. */
  paths?: string[];
  next?: FaultStep[];
}
