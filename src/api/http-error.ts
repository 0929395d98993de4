import { STATUS_CODES } from 'node:http';
import { ApiError, type ErrorCode, type FieldError } from '../errors.js';
import { errorBodyOf } from './results-check.js';

/**
 * Error-body codes that mean the account ran out of credits. The service answers
 * POST /email-verification with 403 `verification_credits_exhausted` when verification
 * credits are gone: that is not an auth problem, and DESIGN.md section 4 gives it
 * exit 5, not 4.
 */
const CREDIT_BODY_CODES: ReadonlySet<string> = new Set(['verification_credits_exhausted']);

/**
 * The stable error code for an HTTP error status, refined by the error body's `code`
 * where the status alone is ambiguous (403: forbidden, or out of credits).
 */
export function codeForStatus(status: number, bodyCode?: string): ErrorCode {
  if (status === 400) return 'API_VALIDATION';
  if (status === 401) return 'AUTH_INVALID';
  if (status === 402) return 'CREDITS_EXHAUSTED';
  if (status === 403) {
    return bodyCode !== undefined && CREDIT_BODY_CODES.has(bodyCode)
      ? 'CREDITS_EXHAUSTED'
      : 'AUTH_FORBIDDEN';
  }
  if (status === 404) return 'API_NOT_FOUND';
  if (status === 409 || status === 422) return 'API_CONFLICT';
  if (status === 413) return 'API_PAYLOAD_TOO_LARGE';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 500) return 'SERVER_ERROR';
  if (status >= 300 && status < 400) return 'MALFORMED_RESPONSE';
  return 'API_VALIDATION';
}

/** `401 Unauthorized`, or the bare number for a status Node has no name for. */
export function statusLine(status: number): string {
  const text = STATUS_CODES[status];
  return text ? `${status} ${text}` : String(status);
}

/** What an error body says: the server's message, field errors and machine-readable code. */
export interface ErrorBodyInfo {
  message?: string;
  fieldErrors: FieldError[];
  code?: string;
}

/** Reads the server's message, field errors and code from an error body, whatever its shape. */
export function readErrorBody(text: string): ErrorBodyInfo {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const plain = text.trim().slice(0, 200);
    return plain ? { message: plain, fieldErrors: [] } : { fieldErrors: [] };
  }
  const loose = json as { message?: unknown; error?: unknown; code?: unknown } | null;
  // `code` is an extra the contract's error body does not list, so it is read loosely.
  const code = typeof loose?.code === 'string' ? { code: loose.code } : {};
  const body = errorBodyOf(json);
  if (body) {
    return {
      message: body.message,
      fieldErrors: body.errors.map((e) => ({ path: e.path, message: e.message })),
      ...code,
    };
  }
  const message =
    typeof loose?.message === 'string'
      ? loose.message
      : typeof loose?.error === 'string'
        ? loose.error
        : undefined;
  return message ? { message, fieldErrors: [], ...code } : { fieldErrors: [], ...code };
}

/** Builds the ApiError for an error status: `POST /contact: 401 Unauthorized: <server message>`. */
export function errorForStatus(init: {
  method: string;
  path: string;
  status: number;
  bodyText: string;
  retryAfterMs?: number | undefined;
  location?: string | undefined;
}): ApiError {
  const { method, path, status } = init;
  const body = readErrorBody(init.bodyText);
  let detail = body.message ? `: ${body.message}` : '';
  if (status >= 300 && status < 400) {
    detail = `: redirects are not followed${init.location ? ` (Location: ${init.location})` : ''}`;
  }
  // api-spec.md lists 404 only for the results endpoints: on a POST it means the service has
  // no such endpoint at all, which is a wrong base URL, not a missing record.
  if (status === 404 && method === 'POST')
    detail += `; the service has no ${method} ${path} endpoint: the base URL is likely wrong`;
  return new ApiError(codeForStatus(status, body.code), {
    status,
    method,
    path,
    message: `${method} ${path}: ${statusLine(status)}${detail}`,
    fieldErrors: body.fieldErrors,
    retryAfterMs: init.retryAfterMs,
  });
}
