/**
 * The shapes the bulk stages share: one name per concept (DESIGN.md section 3). A stage
 * imports these instead of another stage's module.
 */
import type { BulkKind } from '../contract/paths.js';
import type { FileFormat } from '../io/file-format.js';
import type { InputSource } from '../io/read.js';
import type { FormulaEscape } from '../io/formula-escape.js';
import type { RowStatus } from '../io/write.js';
import type { ApiField, ColumnMapping } from './mapping/mapping-types.js';
import type { ValidateOptions } from './mapping/validate.js';
import type { ResultsAnswer } from './run/poll.js';

export type { BulkKind, FileFormat, FormulaEscape, RowStatus };

/** How a run sends one request (a bulk submission, a verification): its stop, its journal. */
export interface SendControl {
  /**
   * The run's stop (Ctrl-C): ends the submission's waits (a 429's Retry-After), not a POST
   * on its way. Stopped before it may have reached the service, it rejects with INTERRUPTED.
   */
  stop?: AbortSignal | undefined;
  /** The journal around each attempt, given to a function marked `journalsAttempts` only. */
  hooks?: SendHooks | undefined;
}

/** The client's attempt hooks (CallOptions.hooks), as a run fills them. */
export interface SendHooks {
  /** Awaited before each attempt goes on the wire: the request is journaled as sent. */
  sending(): Promise<void>;
  /** An attempt proved it was not processed (a 429): journaled, before the wait to resend. */
  notSent(error: { code: string; message: string }): Promise<void>;
}

/**
 * A function that passes `hooks` on to the client (`sending` awaited before each attempt goes
 * out, `notSent` told of one
 * refused unprocessed), marked so by `journalsAttempts` (toBulkApi's and toVerifyApi's are).
 * The mark is the function's own: a function that wraps it is not marked, and the run then
 * journals each request as sent before it calls the function (safe, whatever it does).
 */
export interface JournalsAttempts {
  readonly journalsAttempts?: boolean;
}

/** A bulk submission (BulkApi.submit). */
export interface SubmitFn extends JournalsAttempts {
  (
    kind: BulkKind,
    body: { items: unknown[]; metadata: Record<string, unknown> },
    idempotencyKey: string,
    opts?: SendControl,
  ): Promise<{
    job_id: string;
    download_url: string;
    expiration_date: string | number;
    /** Every successful answer carries it (api-spec.md section 3); read when present. */
    remaining_credits?: unknown;
  }>;
}

/** The part of the API client the bulk run needs (the client arrives as this interface). */
export interface BulkApi {
  submit: SubmitFn;
  /**
   * True once the service has shown that it honours idempotency keys (a POST whose answer
   * was lost may then be sent again with the same key); absent or false: it may not.
   */
  honoursIdempotency?(kind: BulkKind): boolean | undefined;
  /** How many 429s the service has answered so far (absent: the run cannot tell). */
  throttled?(): number;
  results(
    kind: BulkKind,
    jobId: string,
    downloadUrl: string,
    /** The run's stop (Ctrl-C): ends the look's waits (a 429's Retry-After) with INTERRUPTED. */
    stop?: AbortSignal,
  ): Promise<ResultsAnswer<Record<string, unknown>>>;
}

/** One answer of the results cache: the records the service gave, when, and whether it charged. */
export interface CachedAnswer {
  records: Record<string, unknown>[];
  /** When the service gave it (epoch ms). */
  at: number;
  charged: boolean;
  /**
   * Not an answer but a mark: a run sent this request and its answer never came (the service
   * may have charged it). Its `records` are empty and `at` is when it was sent. Runs do not send
   * such a request again by themselves, as a run does not resend its own unconfirmed batch.
   */
  unconfirmed?: boolean;
  /**
   * A mark over this answer: a run sent the request again (the answer was too old for it) at
   * this time, and its answer never came. A run reads the answer while it is fresh for it, and
   * the mark after that (cache-use.ts `asRead`).
   */
  unansweredAt?: number;
}

/**
 * The results cache as the run sees it (it arrives as this interface, already bound to the
 * run's service, account, kind and request options): a request's dedupe key -> its answer.
 * Lookups and writes never throw: a cache that fails is no cache.
 */
export interface ResultsCache {
  get(requestKey: string): CachedAnswer | undefined;
  put(requestKey: string, answer: CachedAnswer): void;
  /**
   * Resolves once few puts wait to be written: a run that awaits it after each batch never
   * holds more answers in memory than the store writes (a cold 1M-row run held 3 GB without).
   */
  settled?(): Promise<void>;
  /**
   * Resolves once the puts so far are committed, so that another process reads them (another
   * run waiting for this one's answer to an address both lists hold).
   */
  committed?(): Promise<void>;
  /**
   * A short name of a request's entry, the same in every process (a hash of the cache's scope
   * and the request): what runs claim before they send a row (row-claims.ts). None: no claims.
   */
  claimKey?(requestKey: string): string;
  /**
   * Marks the entry of a claim key (`claimKey`'s) as a request sent without an answer at `at`,
   * where it holds nothing yet or an answer older than that (cache-use.ts `marked`): an earlier
   * run's batch whose POST got no answer, found in its journal.
   */
  markStored?(storeKey: string, at: number): void;
}

/** How a run uses the results cache. */
export interface CachePolicy {
  /** Take answers from the cache (false with `refresh` or without a cache). */
  read: boolean;
  /** Keep this run's answers in the cache (false with `cache: false`). */
  write: boolean;
  /** Answers older than this are looked up again. */
  maxAgeMs: number;
}

/** One element to send, with the input row it stands for. */
export interface BatchItem extends SentItem {
  element: Record<string, unknown>;
}

/**
 * A row of a job in flight, as its answer needs it: the row, and its request (dedupe) key,
 * under which the cache files the answer. A batch's request elements are let go once the
 * service accepted its job: 32 jobs in flight held 32,000 of them.
 */
export interface SentItem {
  index: number;
  key: string;
}

/** What became of one submitted (leaf) batch. */
export interface LeafResult {
  id: string;
  first: number;
  last: number;
  count: number;
  state: 'spooled' | 'failed' | 'unconfirmed' | 'expired' | 'pending' | 'unsent';
  error?: string;
  code?: string;
  jobId?: string;
  credits: number;
  /** Of `credits`, those an earlier run downloaded (a resumed job): shown apart. */
  creditsEarlier?: number;
  remaining: number | null;
  creditError: boolean;
  polls: number;
  submits: number;
  /**
   * Spools of this batch's credit retries, read by the join after its own (a row a retry
   * answered takes the retry's records), each with the balance its answer showed: 0 when it
   * showed the account dry, so its records without data are the shortage's, not no-matches.
   */
  extra?: { id: string; remaining: number | null }[];
  /** This batch's latest credit retry, when its job did not finish (a job of its own). */
  retry?: {
    state: 'failed' | 'unconfirmed' | 'expired' | 'pending' | 'unsent';
    batch: string;
    jobId?: string;
    /** What became of the retry, for the rows it holds. */
    error?: string;
  };
}

/** Where and how the joined output is written. */
export interface JoinOutput {
  target: string;
  format: FileFormat;
  delimiter?: string;
  bom: boolean;
  /** CSV/TSV: an Excel `sep=` first line, as the input had. */
  sepLine?: boolean;
  formulaEscape: FormulaEscape;
  explode: boolean;
  prefix: string;
  /** The enrichment fields written (`--fields`), in this order; undefined: every field. */
  fields?: readonly string[];
  /**
   * Matches per row the service may return (companies' `--top`; 1 otherwise). CSV/TSV without
   * `explode` write matches 2..N in numbered columns (`enriched_name_2`), so no paid match is dropped.
   */
  matches?: number;
  /** `rejects`: the invalid rows again, with their reason and line. */
  rejects?: string;
  /** How a CSV/TSV `rejects` file is written: the output's rules for its own format. */
  rejectsDialect?: RejectsDialect;
}

/** The delimiter, BOM and `sep=` line of a CSV/TSV `--rejects` file. */
export interface RejectsDialect {
  delimiter?: string;
  bom: boolean;
  sepLine: boolean;
}

/** Progress as the run goes. */
export interface RunProgress {
  phase: 'reading' | 'waiting' | 'writing';
  rowsRead: number;
  jobsTotal: number;
  jobsDone: number;
  creditsCharged: number;
  rowsWritten: number;
  /**
   * How far the jobs still running are, from the progress a service may put in a 202
   * (api-spec.md does not promise one; the sandbox sends it): the sum over those jobs of
   * processed / total, so (jobsDone + jobsRunning) / jobsTotal is the share of the jobs done.
   * Absent when no running job reported any.
   */
  jobsRunning?: number;
  /**
   * Jobs whose last poll answered 404 before their results were due to expire: polled again
   * like a running job (a service may not know a job yet; api-spec.md lists 404 without saying
   * when), counted here so a run that shows no progress says why. Absent when none.
   */
  jobsNotFound?: number;
  /**
   * Rows this run waits for while another enrich process sends them (row claims): their
   * answers are then taken from the cache. Absent when it waits for none.
   */
  rowsHeldElsewhere?: number;
}

/**
 * What happened to one job, for a caller that shows it (`enrich -v`). `batch` is the run's
 * own id of the batch (`3`; `3.0` a part of a batch split because the service found it too
 * large; `3.c1` the rows of batch 3 sent again after they came back out of credits).
 */
export type JobEvent =
  | { t: 'submitted'; batch: string; job: string; rows: number }
  | { t: 'pending'; batch: string; job: string; processed?: number; total?: number }
  /**
   * The job's poll answered 404 before its results were due to expire: it is polled again, and
   * its results count as expired only if 404s go on until `until` (epoch ms).
   */
  | { t: 'not-found'; batch: string; job: string; since: number; until: number }
  | { t: 'done'; batch: string; job: string; records: number; credits: number }
  /** Polling stopped without the results: still running at the deadline, expired, or a failed download. */
  | { t: 'ended'; batch: string; job: string; state: 'timeout' | 'expired' | 'failed' }
  | {
      t: 'retried';
      batch: string;
      rows: number;
      reason: 'too-large' | 'refused' | 'out-of-credits';
    };

/** Why a run stopped sending: a stable error code and the words for it. */
export interface StopReason {
  code: string;
  message: string;
}

/**
 * How messages name the ways to act on a run. The library names its options
 * (`restart: true`, `maxCredits`); the CLI passes its own words, which name flags and commands.
 */
export interface RunWords {
  /** How to pick the run up again: "run the same command again". */
  resume: string;
  /** How to start it over (paying again): "re-run with --restart". */
  restart: string;
  /** The name of an option as the caller knows it: `maxCredits` -> "--max-credits". */
  option(name: string): string;
  /** How to map `field` to `column`: `--map field="Column"`, or `map: { field: "Column" }`. */
  map(field: string, column: string): string;
  /** How to enrich the input as the other kind: "enrich companies", or "kind: 'companies'". */
  kind(kind: BulkKind): string;
  /** How a message names an input field: "business_email", or "email" where only the email is mapped. */
  fieldName(field: string): string;
  /** Whether the caller has a mapping file to re-create (`--save-mapping`); verify-emails has none. */
  mappingFile: boolean;
}

/**
 * A bulk run, resolved once (from the CLI's flags, `enrichFile`'s options or a test) into
 * every decision the stages need: nothing here is decided again downstream.
 */
export interface ResolvedRun {
  readonly kind: BulkKind;
  readonly source: InputSource;
  readonly mapping: ColumnMapping;
  /** field -> column name (the `--save-mapping` form). */
  readonly names: Readonly<Record<string, string>>;
  /** A few sample values per mapped field (the dry run's table). */
  readonly samples: Readonly<Partial<Record<ApiField, string[]>>>;
  /** The request options that are part of the run's identity (with the service's origin). */
  readonly identity: Readonly<{
    mapping: Record<string, unknown>;
    metadata: Record<string, unknown>;
    dedupe: boolean;
    idColumn: number | null;
    /** `refresh` or `off` (`--no-cache`): a run of its own; absent when the cache is used as usual. */
    cache?: 'refresh' | 'off';
  }>;
  readonly validate: ValidateOptions;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** What one row may cost: 1 for contacts, `top` for companies. */
  readonly creditsPerRow: number;
  readonly batchSize: number;
  /** Bulk jobs in flight; undefined: adaptive (run/in-flight.ts), up to IN_FLIGHT_CAP. */
  readonly concurrency: number | undefined;
  readonly dedupe: boolean;
  readonly idColumn: number | undefined;
  readonly maxCredits: number | undefined;
  readonly timeoutMs: number;
  readonly wait: boolean;
  readonly restart: boolean;
  /**
   * Send again the batches whose POST may have reached a service that does not honour
   * idempotency keys and never confirmed them (they may be charged twice).
   */
  readonly resendUnconfirmed: boolean;
  /** Whether answers are read from and written to the results cache, and how old they may be. */
  readonly cache: Readonly<CachePolicy>;
  /** Directory holding run journals and spools. */
  readonly runsDir: string;
  /** Journals and spools of finished runs untouched this long are removed when a run starts (ms). */
  readonly runRetentionMs: number;
  /** The command that resumes this run, kept in the journal for `enrich jobs`. */
  readonly command: string;
  readonly output: Readonly<JoinOutput>;
  readonly words: RunWords;
}
