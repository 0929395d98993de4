import type { InputSource } from '../../io/read.js';
import type {
  CachePolicy,
  FileFormat,
  FormulaEscape,
  ResultsCache,
  RowStatus,
  RunWords,
  StopReason,
  SendControl,
  JournalsAttempts,
} from '../types.js';

/** The three verdicts of api-spec.md 2.4. */
export type Verdict = 'valid' | 'invalid' | 'unknown';
export const VERDICTS: readonly Verdict[] = ['valid', 'invalid', 'unknown'];

/** The service's answer to POST /email-verification (api-spec.md 2.4), plus an in-band error. */
export interface VerifyAnswer {
  email: string;
  status: string;
  credit_charged: boolean;
  remaining_credits: number;
  error?: string | null | undefined;
}

/**
 * The service as a verification run sees it: one call per address. It throws EnrichErrors
 * with the client's codes: CREDITS_EXHAUSTED (read from the answer's data), UNCONFIRMED (the
 * answer was lost and the request may have been charged), AUTH_*, API_VALIDATION (the service
 * refused the address), RATE_LIMITED/NETWORK/... (nothing was processed), INTERRUPTED.
 */
export interface VerifyApi {
  /**
   * `stop` (the run's Ctrl-C) ends the call's waits to send, not a request on its way;
   * `hooks` journal each attempt when the function is marked so.
   */
  verify: VerifyFn;
}

/** One verification (VerifyApi.verify), marked when it calls `sending` and `notSent`. */
export interface VerifyFn extends JournalsAttempts {
  (address: string, how?: SendControl): Promise<VerifyAnswer>;
}

/** A verification run, resolved once: every decision the stages need. */
export interface VerifyRun {
  readonly source: InputSource;
  /** The email column: its index in the header and its name. */
  readonly column: number;
  readonly columnName: string;
  /** Verifications in flight at once. */
  readonly concurrency: number;
  /** At most this many verifications sent by this invocation (the worst case: one credit each). */
  readonly maxCredits: number | undefined;
  readonly timeoutMs: number;
  readonly restart: boolean;
  readonly resendUnconfirmed: boolean;
  readonly cache: CachePolicy;
  readonly runsDir: string;
  readonly command: string;
  /** What, beside the input's identity, makes two runs the same run (journal key). */
  readonly identity: Record<string, unknown>;
  readonly output: {
    readonly target: string;
    readonly format: FileFormat;
    readonly delimiter: string | undefined;
    readonly bom: boolean;
    readonly sepLine?: boolean;
    readonly formulaEscape: FormulaEscape;
  };
  readonly words: RunWords;
}

/** What became of one distinct address. */
export type AddressOutcome =
  | {
      kind: 'answered';
      answer: VerifyAnswer;
      /** Where the verdict came from: this run, an earlier run (journal), the results cache. */
      from: 'service' | 'journal' | 'cache';
      /** When it was looked up (cache hits: the original lookup). */
      at: number;
    }
  /** The service refused the address itself (400): final, not charged. */
  | { kind: 'refused'; message: string }
  /** No verdict: `charge` null when nothing was sent, false when refused uncharged, unknown when the answer was lost. */
  | { kind: 'failed'; message: string; charge: null | false | 'unknown' };

/** One distinct address of the input: the first row holding it and what became of it. */
export interface AddressEntry {
  first: number;
  outcome?: AddressOutcome;
}

/**
 * What a run tells its caller while it runs: after every answer, and every few hundred rows
 * read otherwise. The rows are read as the answers come, so `addresses` is the total only
 * once every row is read; `rowsTotal` says how many rows there are, once counted.
 */
export interface VerifyProgress {
  rowsRead: number;
  /** Rows written to the output (each once its address is settled, in input order). */
  rowsWritten: number;
  /** The input's data rows, counted beside the run; absent until counted. */
  rowsTotal?: number;
  /** Distinct addresses found so far and how many of them have an outcome. */
  addresses: number;
  done: number;
  sent: number;
  creditsCharged: number;
}

/** The services the run is given. */
export interface VerifyDeps {
  api: VerifyApi;
  /** The results cache keyed by canonical address (the single lookups' entries). */
  cache?: ResultsCache | undefined;
  /** The account of the key (`client.account`): part of the run's identity (see RunDeps.account). */
  account?: string | undefined;
  now?: () => number;
  signal?: AbortSignal | undefined;
  onProgress?: ((p: VerifyProgress) => void) | undefined;
  /** Told when the run first waits for another verification run of the account to answer an address both lists hold (address-claims.ts). */
  onWaiting?: ((text: string) => void) | undefined;
}

/** What a verification run did. `exitCode` follows DESIGN.md section 4. */
export interface VerifySummary {
  runKey: string;
  journal: string;
  resumed: boolean;
  rows: number;
  /** Rows by `enrich_status`. */
  statuses: Record<RowStatus, number>;
  /** Rows by `verify_status` (local rule failures count as invalid). */
  verdicts: Record<Verdict, number>;
  /** Invalid rows: a value that is not an address (never sent; its verdict `invalid`), or none. */
  notAnAddress: number;
  noAddress: number;
  /** Rows the reader could not take whole (too many or too few cells): invalid, never sent. */
  malformed: number;
  /** Distinct valid addresses, and the rows that repeated one (fanned out, not sent again). */
  addresses: number;
  duplicates: number;
  /** Addresses answered from the results cache, and the credits their answers cost then. */
  cacheHits: number;
  creditsSaved: number;
  /** Addresses an earlier run of the same command answered (from its journal). */
  answeredEarlier: number;
  /** Verifications this run sent, and what their answers say was charged. */
  sent: number;
  creditsCharged: number;
  /** Addresses whose answer was lost: they may have been charged (not sent again by themselves). */
  unconfirmed: number;
  /** Addresses sent and answered without a verdict or charge (out of credits, an error): sent again next run. */
  failed: number;
  /** Addresses not sent because the run stopped (credits, budget, timeout, an error). */
  notSent: number;
  /** The service's own figures: the last `remaining_credits`, and the drop while the run ran. */
  remainingCredits: number | null;
  balance: { before: number; after: number; drop: number } | null;
  stopReason?: StopReason | undefined;
  exitCode: number;
}
