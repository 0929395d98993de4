import { serviceOf } from '../contract/paths.js';

/**
 * What the client has learned about a service's support for `Idempotency-Key`, which
 * api-spec.md never defines. A service shows that it honours the key by echoing it in the
 * `Idempotency-Key` header of the answer that accepted the request; until one has, a POST
 * that may have reached it (answer lost, 5xx) is never sent again.
 */

/** Remembers, per service endpoint, whether it echoed an Idempotency-Key. */
export interface IdempotencyStore {
  /** True or false once learned for `scope` (origin and endpoint), undefined before. */
  get(scope: string): boolean | undefined;
  set(scope: string, honoured: boolean): void;
}

/** A store that lives as long as the client (the default). */
export function memoryIdempotencyStore(): IdempotencyStore {
  const known = new Map<string, boolean>();
  return {
    get: (scope) => known.get(scope),
    set: (scope, honoured) => void known.set(scope, honoured),
  };
}

/**
 * The scope a lesson applies to: the base URL (its origin and path, trailing slashes dropped,
 * as requests are built from it), the endpoint and the account (a hash of the key,
 * `accountOfKey`). Per endpoint, because a service may de-duplicate bulk submissions and not
 * single lookups; per account, because what one account showed is no promise to another; per
 * path, because two services behind one address (`https://gw/a`, `https://gw/b`) are two
 * services, and one that honours the key is no promise that the other does. A base URL
 * without a path gives the scope its origin alone gave before.
 */
export function idempotencyScope(base: URL, endpoint: string, account: string): string {
  return `${serviceOf(base)}${endpoint} ${account.slice(0, 16)}`;
}

/** True when an answer's headers echo `key` (a sign the service de-duplicates on it). */
export function echoesKey(
  headers: Record<string, string | string[] | undefined>,
  key: string,
): boolean {
  const echoed = headers['idempotency-key'];
  const value = Array.isArray(echoed) ? echoed[0] : echoed;
  return value !== undefined && value.trim() === key;
}
