import { ApiError, type ErrorCode } from '../errors.js';
import type { Failure } from './retry.js';
import type { Dispatcher } from 'undici';

/** Per-attempt time limits, in ms. */
export interface Timeouts {
  connectMs: number;
  /** From sending the request (connection included) to the response headers. */
  headersMs: number;
  /** Longest silence while reading the body. */
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
  /** The body as it came (UTF-8), `text` decoded: what the bulk run spools, with no re-encoding. */
  bytes: Buffer;
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

/** A stream that may be destroyed quietly (no unhandled "aborted" error). */
type Body = AsyncIterable<Buffer> & {
  destroy(err?: Error): void;
  on(event: 'error', fn: () => void): unknown;
};

function discard(body: Body): void {
  body.on('error', () => {});
  body.destroy();
}

/**
 * A per-phase watchdog on precise timers (undici's own timeouts tick about once a
 * second): `arm` (re)starts it for a phase, and on expiry it aborts the exchange.
 */
function watchdog(controller: AbortController) {
  let timer: NodeJS.Timeout | undefined;
  const state: { expired?: 'headers' | 'body' } = {};
  return {
    state,
    arm(phase: 'headers' | 'body', ms: number) {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.expired = phase;
        controller.abort();
      }, ms);
      timer.unref();
    },
    stop: () => clearTimeout(timer),
  };
}

/** Reads a whole body, re-arming the body watchdog per chunk; past `max` bytes it is malformed. */
async function readBody(body: Body, ex: Exchange, max: number, arm: () => void): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  let size = 0;
  arm();
  for await (const chunk of body) {
    arm();
    size += chunk.length;
    if (size > max) {
      discard(body);
      throw fail('malformed', 'MALFORMED_RESPONSE', ex, `response body larger than ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return chunks;
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
  const phase = new AbortController();
  const dog = watchdog(phase);
  const signals = [deadline, phase.signal, ...(init.signal ? [init.signal] : [])];
  let reading = false;
  try {
    // The headers clock starts with the request, so it covers connecting too; connectMs
    // (undici's connect timeout) still bounds the connection on its own.
    dog.arm('headers', t.headersMs);
    const res = await dispatcher.request({
      origin,
      path: ex.path,
      method: ex.method,
      headers: ex.headers,
      body: ex.body,
      signal: AbortSignal.any(signals),
      // The watchdog above keeps these limits precisely; undici's coarse ones are off.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    reading = true;
    const body = res.body as unknown as Body;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > init.maxBodyBytes) {
      discard(body);
      throw fail(
        'malformed',
        'MALFORMED_RESPONSE',
        ex,
        `response body of ${declared} bytes exceeds the ${init.maxBodyBytes}-byte limit`,
      );
    }
    const chunks = await readBody(body, ex, init.maxBodyBytes, () => dog.arm('body', t.bodyMs));
    const bytes = Buffer.concat(chunks);
    return { status: res.statusCode, headers: res.headers, text: bytes.toString('utf8'), bytes };
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
    if (dog.state.expired === 'headers') {
      throw fail('timeout', 'TIMEOUT', ex, `no answer within ${t.headersMs}ms`, err);
    }
    if (dog.state.expired === 'body') {
      throw fail('timeout', 'TIMEOUT', ex, `body stalled for ${t.bodyMs}ms`, err);
    }
    throw classify(err, ex, t, reading);
  } finally {
    dog.stop();
  }
}
