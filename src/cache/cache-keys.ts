import { createHash, hash } from 'node:crypto';
import type { CacheScope } from './results-cache.js';

/** A hash of an API key that names its account in the cache (the key itself is never stored). */
export function accountFingerprint(apiKey: string): string {
  return createHash('sha256').update(`enrich-cache-account\0${apiKey}`).digest('hex').slice(0, 32);
}

/** A request's key in the database: 27 base64url characters, 162 bits of SHA-256 of (scope, request). */
function keyOf(scope: string, requestKey: string): string {
  return hash('sha256', `${scope}\0${requestKey}`, 'base64url').slice(0, 27);
}

/** Requests looked up and missed, whose answers are likely put soon (rows in flight), at most. */
const MISSED_KEYS = 16_384;

/**
 * The keys of one scope's requests. Remembers those of requests that missed, so the put of
 * their answer does not hash them again: a pure function's memo (a key is the same whenever
 * computed), one per scope, bounded (emptied when full).
 */
export function createKeyMemo(scope: string) {
  const missed = new Map<string, string>();
  return {
    of: (requestKey: string) => keyOf(scope, requestKey),
    missed(requestKey: string, key: string): void {
      if (missed.size >= MISSED_KEYS) missed.clear();
      missed.set(requestKey, key);
    },
    /** The key of a request, from the memo when it missed (kept there for its put). */
    known: (requestKey: string) => missed.get(requestKey) ?? keyOf(scope, requestKey),
    taken(requestKey: string): string {
      const key = missed.get(requestKey);
      if (key === undefined) return keyOf(scope, requestKey);
      missed.delete(requestKey);
      return key;
    },
  };
}

/** The scope as one canonical string (metadata keys sorted). */
export function scopeString(scope: CacheScope): string {
  const meta = Object.keys(scope.metadata)
    .sort()
    .map((k) => [k, scope.metadata[k]]);
  return JSON.stringify(['v1', scope.baseUrl, scope.account, scope.kind, meta]);
}
