import { ApiError, EnrichError } from '../errors.js';
import { isCreditExhausted } from '../contract/credits.js';
import type { Exchange, RawResponse } from './transport.js';

/** What one credit buys on every endpoint of api-spec.md: one record, one verification. */
const COST_PER_RECORD = 1;

type Obj = Record<string, unknown>;

function exhausted(ex: Exchange, what: string, remaining: unknown, error: unknown, data: unknown) {
  const said = typeof error === 'string' && error !== '' ? `: ${error}` : '';
  return new EnrichError(
    'CREDITS_EXHAUSTED',
    `${ex.method} ${ex.label}: ${what} (remaining_credits ${String(remaining)})${said}`,
    { hint: 'top up the account, then run the command again', details: { response: data } },
  );
}

/**
 * Reads an in-band `error` of a verification answer (api-spec.md 7) before its schema:
 * credits exhausted (not charged, no verdict, `remaining_credits` below one) is
 * CREDITS_EXHAUSTED; another error without a verdict is the service declining to verify.
 */
export function checkVerificationAnswer(ex: Exchange, raw: RawResponse): void {
  let body: unknown;
  try {
    body = JSON.parse(raw.text);
  } catch {
    return; // parseBody reports it
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const data = body as Obj;
  if (typeof data.error !== 'string' || data.error === '') return;
  // An "unknown" verdict next to the error is no verdict.
  const { status, ...rest } = data;
  const verdict = status === 'valid' || status === 'invalid' ? { status } : {};
  if (
    isCreditExhausted({ ...rest, ...verdict }, data.remaining_credits as number, COST_PER_RECORD)
  ) {
    throw exhausted(
      ex,
      'address not verified, credits exhausted',
      data.remaining_credits,
      data.error,
      data,
    );
  }
  if (status === undefined || status === null) {
    throw new ApiError('SERVER_ERROR', {
      status: raw.status,
      method: ex.method,
      path: ex.label,
      message: `${ex.method} ${ex.label}: the service did not verify the address: ${data.error}`,
    });
  }
}
