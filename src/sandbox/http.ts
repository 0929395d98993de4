import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';

/** An error body of the service: `{status, error, message}` plus optional extras (e.g. `errors`). */
export function errorBody(
  status: number,
  message: string,
  extra?: Record<string, unknown>,
): Record<string, unknown> {
  return { status, error: STATUS_CODES[status] ?? 'Error', message, ...extra };
}

/** Serialises a JSON answer with its Content-Length. */
export function jsonPayload(body: unknown): Buffer {
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

/** The outcome of reading a body: the text, or why it was refused. */
export type BodyResult = { ok: true; text: string } | { ok: false; status: 413; message: string };

/**
 * Reads a request body up to `max` bytes. Refuses up front on a larger Content-Length,
 * and stops reading (rather than buffering) as soon as a chunked body passes the limit.
 */
export function readBody(req: IncomingMessage, max: number): Promise<BodyResult> {
  const tooLarge = (got: string): BodyResult => ({
    ok: false,
    status: 413,
    message: `Request body too large: at most ${max} bytes, got ${got}`,
  });
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve(tooLarge(`${declared}`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        resolve(tooLarge(`more than ${max}`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', reject);
    // A client that hangs up mid-body must not leave the request pending forever.
    req.on('close', () => {
      if (!req.complete) reject(new Error('client closed the connection before the body ended'));
    });
  });
}

const RISKY = /"(?:__proto__|constructor|prototype)"/;

/** Turns every object into a null-prototype copy, so `__proto__` stays a plain own key. */
function nullProtoReviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const copy = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(value)) copy[k] = (value as Record<string, unknown>)[k];
    return copy;
  }
  return value;
}

/**
 * Parses a JSON body without letting `__proto__`/`constructor` keys reach any prototype.
 * Bodies without such keys take the fast path.
 */
export function parseJsonSafe(
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return {
      ok: true,
      value: RISKY.test(text) ? JSON.parse(text, nullProtoReviver) : JSON.parse(text),
    };
  } catch (err) {
    return { ok: false, message: `Malformed JSON body: ${(err as Error).message}` };
  }
}
