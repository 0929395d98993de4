import { accountFingerprint, type CacheScope } from './results-cache.js';
import { serviceOf } from '../contract/paths.js';

/**
 * Where the single lookups (`enrich contact`, `company`, `verify-email`) keep their answers,
 * and under which key: one definition, so `enrich verify-emails` reads and fills the very
 * entries `enrich verify-email` does (and the other way round).
 */

/** The endpoints whose single answers the cache keeps. */
export type SingleEndpoint = 'contact' | 'company' | 'email-verification';

/**
 * The scope of one single endpoint's answers: the service (origin and path, without a
 * trailing slash), the account (a hash of the client's account, itself a hash of the key),
 * the endpoint and the options that change the answer.
 */
export function singleLookupScope(
  baseUrl: string,
  clientAccount: string,
  endpoint: SingleEndpoint,
  metadata: Readonly<Record<string, unknown>> = {},
): CacheScope {
  return {
    baseUrl: serviceOf(baseUrl),
    account: accountFingerprint(clientAccount),
    kind: `single:${endpoint}`,
    metadata,
  };
}

/** The request as the cache keys it: its fields sorted, values trimmed, empty ones left out. */
export function singleRequestKey(request: Readonly<Record<string, unknown>>): string {
  const entries = Object.entries(request)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => [k, typeof v === 'string' ? v.trim() : v] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(entries);
}
