import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ApiError, usageError } from '../errors.js';
import { VERSION } from '../version.js';
import { Paths, type BulkKind } from '../contract/paths.js';
import type * as ResponsesModule from '../contract/responses.js';
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
import { DEFAULT_RETRY_POLICY, parseRetryAfter, type RetryPolicy } from './retry.js';
import { joinBasePath, resolveResultsTarget } from './results-path.js';
import { parseBaseUrl } from './base-url.js';
import { parseBody } from './parse-body.js';
import {
  isBulkJob,
  isCompaniesResults,
  isContactsResults,
  pendingProgressOf,
} from './results-check.js';
import { realSleep, sendWithRetry, type SendContext } from './send.js';
import type { Exchange } from './transport.js';

export type { RetryPolicy } from './retry.js';

type Responses = typeof ResponsesModule;
// zod and the response schemas are loaded on first need: the bodies of a bulk run pass the
// checks of results-check.ts, so a bulk run never loads them (about 8 MB of RSS and 80 ms).
let responses: Promise<Responses> | undefined;
function schemaOf<S>(pick: (r: Responses) => S): () => Promise<S> {
  return async () => pick(await (responses ??= import('../contract/responses.js')));
}

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
}

/** Bulk results: still processing, or done with the records (and the body they were parsed from). */
export type ResultsState<R> =
  | { state: 'pending'; retryAfterMs?: number; processed?: number; total?: number }
  | { state: 'done'; records: R[]; remainingCredits: number; body?: Uint8Array };

/** The typed client: one method per endpoint of api-spec.md section 4. */
export interface EnrichClient {
  enrichContact(body: ContactRequest): Promise<ContactResponse>;
  enrichCompany(body: CompanyRequest): Promise<CompaniesResponse>;
  verifyEmail(email: string): Promise<EmailVerificationResponse>;
  submitContacts(body: BulkContactsRequest, opts: { idempotencyKey: string }): Promise<BulkJob>;
  submitCompanies(body: BulkCompaniesRequest, opts: { idempotencyKey: string }): Promise<BulkJob>;
  getContactsResults(
    jobId: string,
    opts?: { downloadUrl?: string },
  ): Promise<ResultsState<ContactRecord>>;
  getCompaniesResults(
    jobId: string,
    opts?: { downloadUrl?: string },
  ): Promise<ResultsState<CompanyRecord>>;
  /** Zero-cost key check: asks for the results of a random job id. */
  checkKey(): Promise<
    { ok: true } | { ok: false; reason: 'invalid' | 'forbidden'; message: string }
  >;
  close(): Promise<void>;
}

/** Builds a client for the service at `baseUrl` that authenticates with `apiKey`. */
export function createClient(options: ClientOptions): EnrichClient {
  const base = parseBaseUrl(options.baseUrl);
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    throw usageError('API key: expected printable characters without spaces');
  }
  const t = options.timeouts ?? {};
  const timeouts = {
    connectMs: t.connectMs ?? 10_000,
    headersMs: t.headersMs ?? 60_000,
    bodyMs: t.bodyMs ?? 120_000,
    totalMs: t.totalMs ?? 600_000,
  };
  let closing: Promise<void> | undefined;
  const ctx: SendContext = {
    dispatcher: createDispatcher(base, {
      connectMs: timeouts.connectMs,
      connections: options.connections ?? 8,
    }),
    origin: base.origin,
    timeouts,
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    maxBodyBytes: options.maxBodyBytes ?? 512 * 1024 * 1024,
    clock: options.clock ?? Date,
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
    debug: options.debug,
    signal: options.signal,
    secrets: [options.apiKey],
  };
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': options.userAgent ?? `enrich/${VERSION}`,
  };

  const post = async <S extends z.ZodType>(
    endpoint: string,
    body: unknown,
    schema: () => Promise<S>,
    idempotencyKey?: string,
    accepts?: (json: unknown) => boolean,
  ): Promise<z.infer<S>> => {
    const ex: Exchange = {
      method: 'POST',
      label: endpoint,
      path: joinBasePath(base, endpoint),
      headers: {
        ...headers,
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: JSON.stringify(body),
    };
    const raw = await sendWithRetry(ctx, ex, Boolean(idempotencyKey));
    return parseBody(raw, ex, schema, accepts);
  };

  const results = async <S extends z.ZodType>(
    kind: BulkKind,
    jobId: string,
    schema: () => Promise<S>,
    pick: (data: z.infer<S>) => unknown[],
    downloadUrl?: string,
    accepts?: (json: unknown) => boolean,
  ) => {
    const target = resolveResultsTarget(base, kind, jobId, downloadUrl);
    if (target.ignoredForeign) {
      ctx.debug?.(`download_url of job ${jobId} is on another origin; using ${target.label}`);
    }
    const ex: Exchange = { method: 'GET', label: target.label, path: target.path, headers };
    const raw = await sendWithRetry(ctx, ex, true);
    if (raw.status === 202) {
      let progress: { processed?: number; total?: number } = {};
      try {
        progress = pendingProgressOf(JSON.parse(raw.text));
      } catch {
        // The spec does not show a 202 body; none, or any, is fine.
      }
      const retryAfterMs = parseRetryAfter(raw.headers['retry-after'], ctx.clock.now());
      return {
        state: 'pending' as const,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(progress.processed !== undefined ? { processed: progress.processed } : {}),
        ...(progress.total !== undefined ? { total: progress.total } : {}),
      };
    }
    const data = await parseBody(raw, ex, schema, accepts);
    const done = {
      state: 'done' as const,
      records: pick(data),
      remainingCredits: (data as { remaining_credits: number }).remaining_credits,
    };
    // The body the records came from, as it came, so the bulk run can spool it without
    // stringifying and encoding again. Not enumerable: a wrapper that rebuilds the answer
    // ({...answer, records}) drops it, and the run then spools the records it was given.
    Object.defineProperty(done, 'body', { value: raw.bytes, enumerable: false });
    return done;
  };

  return {
    enrichContact: (body) =>
      post(
        Paths.contact,
        body,
        schemaOf((r) => r.contactResponseSchema),
      ),
    enrichCompany: (body) =>
      post(
        Paths.company,
        body,
        schemaOf((r) => r.companiesResponseSchema),
      ),
    verifyEmail: (email) =>
      post(
        Paths.emailVerification,
        { email },
        schemaOf((r) => r.emailVerificationResponseSchema),
      ),
    submitContacts: (body, opts) =>
      post(
        Paths.contacts,
        body,
        schemaOf((r) => r.bulkJobSchema),
        opts.idempotencyKey,
        isBulkJob,
      ),
    submitCompanies: (body, opts) =>
      post(
        Paths.companies,
        body,
        schemaOf((r) => r.bulkJobSchema),
        opts.idempotencyKey,
        isBulkJob,
      ),
    getContactsResults: (jobId, opts) =>
      results(
        'contacts',
        jobId,
        schemaOf((r) => r.contactsResultsResponseSchema),
        (d) => d.contacts,
        opts?.downloadUrl,
        isContactsResults,
      ) as Promise<ResultsState<ContactRecord>>,
    getCompaniesResults: (jobId, opts) =>
      results(
        'companies',
        jobId,
        schemaOf((r) => r.companiesResponseSchema),
        (d) => d.companies,
        opts?.downloadUrl,
        isCompaniesResults,
      ) as Promise<ResultsState<CompanyRecord>>,
    async checkKey() {
      try {
        await results(
          'contacts',
          randomUUID(),
          schemaOf((r) => r.contactsResultsResponseSchema),
          (d) => d.contacts,
        );
        return { ok: true };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 404) return { ok: true };
        if (err.status === 401) return { ok: false, reason: 'invalid', message: err.message };
        if (err.status === 403) return { ok: false, reason: 'forbidden', message: err.message };
        throw err;
      }
    },
    // Idempotent: a second close (a finally after an explicit close) is not an error.
    close: () => (closing ??= ctx.dispatcher.close()),
  };
}
