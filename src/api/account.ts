import { createHash } from 'node:crypto';

/**
 * Names the account of an API key without the key: a SHA-256 of it. The results cache keeps
 * one account's answers apart from another's by it; the key itself is never stored.
 */
export function accountOfKey(apiKey: string): string {
  return createHash('sha256').update(`enrich-account\0${apiKey}`).digest('hex');
}
