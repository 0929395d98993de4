/**
 * The request rules and conversions of api-spec.md that need no schema library: the
 * bulk run checks every row with them, and loads zod (the schemas of requests.ts and
 * responses.ts) only when a response fails a hand-written check.
 */
import { CONTACT_COMBINATIONS, type CompanyInputField, type ContactInputField } from './limits.js';

/** True when a field holds a non-blank string: blank values do not satisfy a combination. */
function present(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** The field as the message names it: the wire name unless the caller names it otherwise. */
type NameField = (field: string) => string;
const wireName: NameField = (field) => field;

/** The rule in words: "needs at least one of: a; b + c", each field named by `name`. */
function needsOneOf(combinations: readonly (readonly string[])[], name: NameField): string {
  return `needs at least one of: ${combinations.map((c) => c.map(name).join(' + ')).join('; ')}`;
}

/** Returns the combination rule message when a contact satisfies none of them. */
export function contactCombinationError(
  input: Partial<Record<ContactInputField, unknown>>,
  name: NameField = wireName,
): string | undefined {
  const ok = CONTACT_COMBINATIONS.some((combo) => combo.every((f) => present(input[f])));
  if (ok) return undefined;
  return needsOneOf(CONTACT_COMBINATIONS, name);
}

/** Returns the company rule message when neither name nor website is present. */
export function companyCombinationError(
  input: Partial<Record<CompanyInputField, unknown>>,
  name: NameField = wireName,
): string | undefined {
  if (present(input.company_name) || present(input.company_website)) return undefined;
  return needsOneOf([['company_website'], ['company_name']], name);
}

type MobileMeta = { mobile_phone_enrichment?: boolean; mobile_phone_exists?: boolean };

/** The `mobile_phone_exists` dependency: only together with `mobile_phone_enrichment` = true. */
export function mobileDependencyError(meta: MobileMeta | undefined): string | undefined {
  if (meta?.mobile_phone_exists !== undefined && meta.mobile_phone_enrichment !== true) {
    return 'mobile_phone_exists may be given only together with mobile_phone_enrichment = true';
  }
  return undefined;
}

/** The largest time a JavaScript Date holds (ECMA-262: 100,000,000 days after 1970). */
const MAX_DATE_MS = 8.64e15;

/** Converts `expiration_date` (seconds since the epoch, string or number) to epoch ms. */
export function expirationToMs(value: string | number): number | undefined {
  const n = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isFinite(n) || n <= 0) return undefined;
  // Tolerate a service that sends milliseconds instead of seconds.
  const ms = n > 1e12 ? n : n * 1000;
  // Past what a Date can hold (a "never" sentinel, nanoseconds): no usable expiry.
  return isDateTime(ms) ? ms : undefined;
}

/** True for a time (epoch ms) a Date can hold: an expiry that can be planned by and shown. */
export function isDateTime(ms: unknown): ms is number {
  return typeof ms === 'number' && Math.abs(ms) <= MAX_DATE_MS;
}
