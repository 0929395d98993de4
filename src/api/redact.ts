import type { RawResponse } from './transport.js';

/** The forms a secret takes in text: as is, and escaped inside a JSON string. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([secret, json, json.replaceAll('/', '\\/')]);
  return [...forms];
}

/** Replaces every occurrence of each secret in `text` with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s.length < 4) continue;
    for (const form of formsOf(s)) out = out.split(form).join('***');
  }
  return out;
}

/**
 * An answer with every secret masked in its body, so a service that echoes the key (in a
 * record's error, in echoed fields) never gets it into an output, a spool or the cache.
 * The mask stays inside the JSON string it replaced, so the body parses as before.
 */
export function redactAnswer(raw: RawResponse, secrets: readonly string[]): RawResponse {
  const found = secrets.some(
    (s) => s.length >= 4 && formsOf(s).some((form) => raw.bytes.includes(form)),
  );
  if (!found) return raw;
  const text = redact(raw.text, secrets);
  return { ...raw, text, bytes: Buffer.from(text, 'utf8') };
}
