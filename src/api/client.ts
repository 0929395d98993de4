import { randomUUID } from 'node:crypto';
import { accountOfKey } from './account.js';
import { ApiError, usageError } from '../errors.js';
import { VERSION } from '../version.js';
import { Paths, type BulkKind } from '../contract/paths.js';
import type {
  BulkCompaniesRequest,
  BulkContactsRequest,
  BulkJob,
  CompaniesResponse,
  CompanyRecord,
  CompanyRequest,
  ContactRecord,
  ContactRequest,
  ContactResponse,
  EmailVerificationResponse,
} from '../contract/index.js';
import { createDispatcher } from './dispatcher.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { parseBaseUrl } from './base-url.js';
import { realSleep, type AttemptHooks, type LongWait, type SendContext } from './send.js';
import { createRateLimiter } from './rate-limiter.js';
import { idempotencyScope, memoryIdempotencyStore, type IdempotencyStore } from './idempotency.js';
import { createCalls, type CreditsSeen } from './calls.js';
import { bulkMethods, schemaOf, singleMethods, type Deadline } from './methods.js';

export type { RetryPolicy } from './retry.js';
export type { CreditsSeen } from './calls.js';
export type { IdempotencyStore } from './idempotency.js';
export type { LongWait } from './send.js';

/** How to build a client. */
export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Default `enrich/<VERSION>`. */
  userAgent?: string;
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number; totalMs?: number };
  retry?: Partial<RetryPolicy>;
  clock?: { now(): number };
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** One line per request and retry decision; never contains the key. */
  debug?: (line: string) => void;
  signal?: AbortSignal;
  /** Keep-alive connections to the service (default 8). */
  connections?: number;
  /** Largest response body accepted (default 512 MiB). */
  maxBodyBytes?: number;
  /** Ceiling on requests per second, shared by every call of this client (setting `rate_limit`). */
  rateLimit?: number;
  /** Epoch ms by which every call must end, unless the call gives its own deadline. */
  deadline?: number;
  /** Where the client remembers which endpoints honour Idempotency-Key (default: in memory). */
  idempotencyStore?: IdempotencyStore;
  /** Told every `remaining_credits` an answer reports, with the answer's time. */
  onCredits?: (seen: CreditsSeen) => void;
  /**
   * Told when a 429 asks for a wait of 30 s or more (once per wait), so a person hears why
   * nothing moves: a Retry-After of hours is a quota, not a rate limit. A wait that ends after
   * a call's deadline is not made: that call fails at once (RATE_LIMITED).
   */
  onLongWait?: (wait: LongWait) => void;
}

/** Options of one call: `deadline` (epoch ms) bounds its retries and waits. */
export interface CallOptions {
  deadline?: number;
  /**
   * Ends the call's waits (a 429's Retry-After, a retry's backoff), never a request on its way,
   * which still gets its answer: then INTERRUPTED when nothing may have reached the service,
   * UNCONFIRMED for a POST that may have been processed.
   */
  stop?: AbortSignal | undefined;
  /** Told before each attempt goes out, and of one that proves it was not processed. */
  hooks?: AttemptHooks | undefined;
}

/** Bulk results: still processing, or done with the records (and the body they were parsed from). */
export type ResultsState<R> =
  | { state: 'pending'; retryAfterMs?: number; processed?: number; total?: number }
  | { state: 'done'; records: R[]; remainingCredits: number; body?: Uint8Array };

/**
 * The typed client: one method per endpoint of api-spec.md section 4. Every POST is
 * charged, so one whose answer was lost is repeated only to an endpoint that has echoed
 * an Idempotency-Key; otherwise it throws UNCONFIRMED (exit 3). Out of credits, read from
 * the answer's data, is CREDITS_EXHAUSTED (exit 5).
 */
export interface EnrichClient {
  enrichContact(body: ContactRequest, opts?: CallOptions): Promise<ContactResponse>;
  enrichCompany(body: CompanyRequest, opts?: CallOptions): Promise<CompaniesResponse>;
  verifyEmail(email: string, opts?: CallOptions): Promise<EmailVerificationResponse>;
  submitContacts(
    body: BulkContactsRequest,
    opts: { idempotencyKey: string } & CallOptions,
  ): Promise<BulkJob>;
  submitCompanies(
    body: BulkCompaniesRequest,
    opts: { idempotencyKey: string } & CallOptions,
  ): Promise<BulkJob>;
  getContactsResults(
    jobId: string,
    opts?: { downloadUrl?: string } & CallOptions,
  ): Promise<ResultsState<ContactRecord>>;
  getCompaniesResults(
    jobId: string,
    opts?: { downloadUrl?: string } & CallOptions,
  ): Promise<ResultsState<CompanyRecord>>;
  /** True once the bulk endpoint of `kind` echoed an Idempotency-Key, false once it did not. */
  honoursIdempotency(kind: BulkKind): boolean | undefined;
  /** How many 429s the service has answered this client (the run's jobs in flight back off). */
  throttled(): number;
  /**
   * Names the account of this client's key without the key: a SHA-256 of it. The results
   * cache keeps one account's answers apart from another's by it.
   */
  readonly account: string;
  /** Zero-cost key check: asks for the results of a random job id. */
  checkKey(): Promise<
    | { ok: true }
    | { ok: false; reason: 'invalid' | 'forbidden' | 'not-the-service'; message: string }
  >;
  close(): Promise<void>;
}

/** Builds the context every call shares: dispatcher, limits, injected time, rate limiter. */
function sendContext(options: ClientOptions, base: URL): SendContext {
  const t = options.timeouts ?? {};
  const clock = options.clock ?? Date;
  const sleep = options.sleep ?? realSleep;
  return {
    dispatcher: createDispatcher(base, {
      connectMs: t.connectMs ?? 10_000,
      connections: options.connections ?? 8,
    }),
    origin: base.origin,
    timeouts: {
      connectMs: t.connectMs ?? 10_000,
      headersMs: t.headersMs ?? 60_000,
      bodyMs: t.bodyMs ?? 120_000,
      totalMs: t.totalMs ?? 600_000,
    },
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    maxBodyBytes: options.maxBodyBytes ?? 512 * 1024 * 1024,
    clock,
    sleep,
    random: options.random ?? Math.random,
    debug: options.debug,
    signal: options.signal,
    secrets: [options.apiKey],
    limiter: createRateLimiter({ clock, sleep }, options.rateLimit),
    onLongWait: options.onLongWait,
    longWaitTold: { until: 0 },
  };
}

/** The free request of checkKey: the results of a job that does not exist (no credit is spent). */
function askUnknownJob(calls: ReturnType<typeof createCalls>, deadline: number | undefined) {
  return calls.results(
    'contacts',
    randomUUID(),
    schemaOf((r) => r.contactsResultsResponseSchema),
    (d) => d.contacts,
    { deadline },
  );
}

/** A key no service issues: checkKey's probe of whether a 404 came from the service. */
const UNKNOWN_KEY = 'enrich-key-check-not-a-key';

/**
 * Tells a 404 for the unknown job checkKey asked about (the key works) from a base URL that
 * is not the service (every path 404s). api-spec.md section 5 promises a 401 for an invalid
 * key on every endpoint, so the same request with a key that cannot exist must be refused
 * there; a 404 again means nothing at this address checks keys. Free: no enrichment is asked.
 */
async function probeUnknownKey(
  calls: ReturnType<typeof createCalls>,
  deadline: number | undefined,
): Promise<{ ok: true } | { ok: false; reason: 'not-the-service'; message: string }> {
  try {
    await askUnknownJob(calls, deadline);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      return { ok: false, reason: 'not-the-service', message: err.message };
  }
  return { ok: true };
}

/** Builds a client for the service at `baseUrl` that authenticates with `apiKey`. */
export function createClient(options: ClientOptions): EnrichClient {
  const base = parseBaseUrl(options.baseUrl);
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    throw usageError('API key: expected printable characters without spaces');
  }
  if (options.rateLimit !== undefined && !(options.rateLimit > 0)) {
    throw usageError(`rate limit: expected requests per second > 0, got ${options.rateLimit}`);
  }
  let closing: Promise<void> | undefined;
  const ctx = sendContext(options, base);
  const store = options.idempotencyStore ?? memoryIdempotencyStore();
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent ?? `enrich/${VERSION}`,
  };
  const account = accountOfKey(options.apiKey);
  const calls = createCalls({
    ctx,
    base,
    store,
    account,
    headers,
    onCredits: options.onCredits,
  });
  // The same service asked with a key that cannot exist (checkKey's second look).
  const unknownKeyCalls = () =>
    createCalls({
      ctx,
      base,
      store: memoryIdempotencyStore(),
      account: accountOfKey(UNKNOWN_KEY),
      headers: { ...headers, authorization: `Bearer ${UNKNOWN_KEY}` },
    });
  const by: Deadline = (opts) => opts?.deadline ?? options.deadline;

  return {
    ...singleMethods(calls, by),
    ...bulkMethods(calls, by),
    account,
    throttled: () => ctx.limiter.throttled(),
    honoursIdempotency: (kind) =>
      store.get(
        idempotencyScope(base, kind === 'contacts' ? Paths.contacts : Paths.companies, account),
      ),
    async checkKey() {
      try {
        await askUnknownJob(calls, options.deadline);
        return { ok: true };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 404) return probeUnknownKey(unknownKeyCalls(), options.deadline);
        if (err.status === 401) return { ok: false, reason: 'invalid', message: err.message };
        if (err.status === 403) return { ok: false, reason: 'forbidden', message: err.message };
        throw err;
      }
    },
    // Idempotent: a second close (a finally after an explicit close) is not an error.
    close: () => (closing ??= ctx.dispatcher.close()),
  };
}
