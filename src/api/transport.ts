import { ApiError, type ErrorCode } from '../errors.js';
import type { Failure } from './retry.js';
import type { Dispatcher } from 'undici';

/** Per-attempt time limits, in ms. */
export interface Timeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** Deadline of one whole exchange, connect to last body byte. */
  totalMs: number;
}

/** One HTTP exchange to send. */
export interface Exchange {
  method: 'GET' | 'POST';
  /** The path shown in messages (relative to the base URL, e.g. `/contact`). */
  label: string;
  /** The path actually requested on the origin (base path included). */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

/** A complete answer: status, headers (lower-case names) and the whole body as text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** An attempt that failed: the error to report, and what the retry rules need. */
export class AttemptFailure extends Error {
  constructor(
    readonly failure: Failure,
    readonly error: ApiError,
    readonly retryAfterMs?: number,
  ) {
    super(error.message);
  }
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function fail(kind: Failure['kind'], code: ErrorCode, ex: Exchange, what: string, cause?: unknown) {
  const error = new ApiError(code, {
    status: 0,
    method: ex.method,
    path: ex.label,
    message: `${ex.method} ${ex.label}: ${what}`,
    cause,
  });
  return new AttemptFailure({ kind } as Failure, error);
}

/** Maps a thrown undici/socket error to a failure kind; `reading` is true once headers arrived. */
function classify(err: unknown, ex: Exchange, t: Timeouts, reading: boolean): AttemptFailure {
  const code = errorCodeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return fail('connect', 'TIMEOUT', ex, `no connection within ${t.connectMs}ms`, err);
  }
  if (code && CONNECT_CODES.has(code)) {
    return fail('connect', 'NETWORK', ex, `cannot connect (${code})`, err);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return fail('timeout', 'TIMEOUT', ex, `no answer within ${t.headersMs}ms`, err);
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return fail('timeout', 'TIMEOUT', ex, `body stalled for ${t.bodyMs}ms`, err);
  }
  if (reading || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return fail('truncated', 'MALFORMED_RESPONSE', ex, `response body cut short (${message})`, err);
  }
  return fail('network', 'NETWORK', ex, `connection failed (${code ?? message})`, err);
}

/** Reads a body stream into text, refusing more than `limit` bytes. */
async function readBody(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): void },
  limit: number,
  ex: Exchange,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw fail('malformed', 'MALFORMED_RESPONSE', ex, `response body larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Sends one exchange and reads the whole answer. Never follows redirects (undici's
 * request does not). Throws AttemptFailure for anything but a complete HTTP answer.
 */
export async function performExchange(init: {
  dispatcher: Dispatcher;
  origin: string;
  exchange: Exchange;
  timeouts: Timeouts;
  maxBodyBytes: number;
  signal?: AbortSignal | undefined;
}): Promise<RawResponse> {
  const { dispatcher, origin, exchange: ex, timeouts: t } = init;
  const deadline = AbortSignal.timeout(t.totalMs);
  const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  let reading = false;
  try {
    const res = await dispatcher.request({
      origin,
      path: ex.path,
      method: ex.method,
      headers: ex.headers,
      body: ex.body,
      signal,
      headersTimeout: t.headersMs,
      bodyTimeout: t.bodyMs,
    });
    reading = true;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > init.maxBodyBytes) {
      res.body.destroy();
      throw fail(
        'malformed',
        'MALFORMED_RESPONSE',
        ex,
        `response body of ${declared} bytes exceeds the ${init.maxBodyBytes}-byte limit`,
      );
    }
    const text = await readBody(res.body, init.maxBodyBytes, ex);
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (err instanceof AttemptFailure) throw err;
    if (init.signal?.aborted) {
      const error = new ApiError('INTERRUPTED', {
        status: 0,
        method: ex.method,
        path: ex.label,
        message: `${ex.method} ${ex.label}: cancelled`,
        cause: err,
      });
      throw new AttemptFailure({ kind: 'deadline' }, error);
    }
    if (deadline.aborted) {
      throw fail('deadline', 'TIMEOUT', ex, `no complete answer within ${t.totalMs}ms`, err);
    }
    throw classify(err, ex, t, reading);
  }
}
