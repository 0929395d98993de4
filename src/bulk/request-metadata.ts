import { Limits } from '../contract/limits.js';
import { EnrichError } from '../errors.js';
import { LIBRARY_WORDS } from '../pipeline/run/messages.js';
import type { BulkKind, RunWords } from '../pipeline/types.js';

/** What each row asks of the service (the CLI's request flags). */
export interface RequestOptions {
  /** Contacts: also look up mobile phones (`--mobile`). */
  mobile?: boolean;
  /** Contacts: only contacts that have a work email (`--require-email`). */
  requireEmail?: boolean;
  /** Contacts: only contacts that have a mobile phone; needs `mobile` (`--require-mobile`). */
  requireMobile?: boolean;
  /** Contacts: real-time email verification (`--verify`). */
  verify?: boolean;
  /** Companies: matches per company, 1 to 10 (`--top`). */
  top?: number;
}

const REQUEST_KEYS: readonly string[] = [
  'mobile',
  'requireEmail',
  'requireMobile',
  'verify',
  'top',
];

/** The `metadata` of a bulk request: contacts send the four booleans, companies `top_matches_returned`. */
export function requestMetadata(
  kind: BulkKind,
  r: RequestOptions = {},
  words: RunWords = LIBRARY_WORDS,
): Record<string, unknown> {
  const { option } = words;
  if (kind !== 'contacts' && kind !== 'companies')
    throw new EnrichError(
      'USAGE',
      `${option('kind')}: expected contacts or companies, got ${JSON.stringify(kind)}`,
    );
  // A misspelt option (`tpo: 3`) would run with the default and spend credits on it.
  const unknown = Object.keys(r).filter((k) => !REQUEST_KEYS.includes(k));
  if (unknown.length > 0)
    throw new EnrichError(
      'USAGE',
      `${option('request')}: unknown option${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`,
      { hint: `Known request options: ${REQUEST_KEYS.join(', ')}.` },
    );
  if (kind === 'companies') {
    const top = r.top ?? Limits.topMatchesDefault;
    if (!Number.isInteger(top) || top < Limits.topMatchesMin || top > Limits.topMatchesMax)
      throw new EnrichError(
        'USAGE',
        `${option('top')}: expected an integer from ${Limits.topMatchesMin} to ${Limits.topMatchesMax}, got ${JSON.stringify(top)}`,
      );
    return { top_matches_returned: top };
  }
  if (r.requireMobile && !r.mobile)
    throw new EnrichError(
      'USAGE',
      `${option('requireMobile')} needs ${option('mobile')}: the service filters on mobile phones only when it is asked for them`,
    );
  const meta: Record<string, unknown> = {
    business_email_exists: r.requireEmail === true,
    real_time_verification: r.verify === true,
  };
  if (r.mobile) meta.mobile_phone_enrichment = true;
  if (r.requireMobile) meta.mobile_phone_exists = true;
  return meta;
}
