import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level: equal bodies give equal text. Every key
 * used anywhere in the value, sorted, is JSON.stringify's property list: it then writes
 * each object's keys in that order itself (several times faster than building the text).
 */
export function canonicalJson(value: unknown): string {
  const keys = new Set<string>();
  const collect = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const item of v) collect(item);
      return;
    }
    for (const k of Object.keys(v)) {
      keys.add(k);
      collect((v as Record<string, unknown>)[k]);
    }
  };
  collect(value);
  return JSON.stringify(value, [...keys].sort()) ?? 'null';
}

/** SHA-256 of the canonical JSON of a body: how Idempotency-Key reuse is compared. */
export function bodyHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
