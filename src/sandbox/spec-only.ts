/**
 * The spec-only mode: the sandbox keeps only api-spec.md's promises, so a client that relies on
 * one of the default mode's extras (an honoured Idempotency-Key, the wording of errors, a numeric
 * expiration_date, Retry-After and RateLimit-* headers, a 403 for verification credits) fails
 * its tests against it.
 */
import { INSUFFICIENT_CREDITS } from './generate.js';
import { NO_MATCH } from './generate-contact.js';
import type { Reply } from './context.js';

/** The in-band error of a record not enriched for lack of credits, worded as another service might. */
export const SPEC_ONLY_QUOTA = 'No data returned: quota reached';
/** The in-band error of a record without a match, worded as another service might. */
export const SPEC_ONLY_NO_MATCH = 'Nothing found for this input';
/** The in-band error of a verification refused for lack of verification credits. */
export const SPEC_ONLY_VERIFY_QUOTA = 'Verification unavailable: quota reached';

const WORDING = new Map<string, string>([
  [INSUFFICIENT_CREDITS, SPEC_ONLY_QUOTA],
  [NO_MATCH, SPEC_ONLY_NO_MATCH],
]);

/** Rewords in-band errors and turns `original_fields` into JSON text (the spec declares a string). */
export function specOnlyRecords<R extends object>(records: R[]): R[] {
  return records.map((r) => {
    const rec = { ...r } as Record<string, unknown>;
    if (typeof rec.error === 'string') rec.error = WORDING.get(rec.error) ?? rec.error;
    if (rec.original_fields !== null && typeof rec.original_fields === 'object')
      rec.original_fields = JSON.stringify(rec.original_fields);
    return rec as R;
  });
}

/** A 400 worded otherwise than the default mode: the field paths, never our own sentences. */
export function specOnlyBadRequest(reply: Reply): Reply {
  const body = reply.body as { errors?: { path: string }[] } | undefined;
  const paths = (body?.errors ?? []).map((e) => e.path).filter((p) => p !== '');
  const message =
    paths.length > 0 ? `Request rejected. Check: ${paths.join(', ')}` : 'Request rejected.';
  return {
    status: 400,
    headers: reply.headers,
    body: { status: 400, error: 'Bad Request', message },
  };
}

/** Strips the extras from any reply of the spec-only mode (rate-limit and Retry-After headers, 202 and 429 bodies). */
export function specOnlyReply(reply: Reply): Reply {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(reply.headers ?? {})) {
    const lower = k.toLowerCase();
    if (lower === 'retry-after' || lower.startsWith('ratelimit') || lower === 'idempotency-key')
      continue;
    headers[k] = v;
  }
  const out: Reply = { ...reply, headers };
  if (reply.status === 202 || reply.status === 429) out.body = '';
  if (reply.status === 400) return specOnlyBadRequest(out);
  return out;
}
