import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** The prefix of every sandbox API key, so a leaked one is recognisable. */
export const KEY_PREFIX = 'sk_sbx_';

/**
 * A new random API key, e.g. `sk_sbx_3f9a…` (128 random bits in hex). Hex, not base64url:
 * a `_` or `-` among the first random characters made the masked form (`sk_sbx_…a1b2`)
 * lose its prefix now and then.
 */
export function newApiKey(): string {
  return KEY_PREFIX + randomBytes(16).toString('hex');
}

/** A new random admin token. */
export function newAdminToken(): string {
  return 'sbx_admin_' + randomBytes(24).toString('base64url');
}

/** A short random id with a prefix, e.g. `key_1a2b3c4d5e6f`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

/** SHA-256 of a secret, hex: the only form in which keys are stored. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Compares two hex SHA-256 digests in constant time. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** The listed form of a key: prefix and last four characters, `sk_sbx_…a1b2`. */
export function maskKey(key: string): string {
  return `${KEY_PREFIX}…${key.slice(-4)}`;
}

/** Reads the bearer token of an Authorization header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}

const SEND = 'send Authorization: Bearer <API_KEY>';

/**
 * Why an Authorization header gives no bearer token, for the 401 message. It never quotes
 * the header: a key sent without `Bearer` would be echoed back.
 */
export function bearerProblem(header: string | undefined): string {
  if (header === undefined) return `no Authorization: Bearer header was sent; ${SEND}`;
  const words = header.trim().split(/\s+/);
  if (words[0] === '') return `the Authorization header is empty; ${SEND}`;
  if (words[0]?.toLowerCase() !== 'bearer')
    return `the Authorization header is not the Bearer scheme; ${SEND}`;
  if (words.length === 1) return `the Authorization header has no key after Bearer; ${SEND}`;
  return `the Authorization header has more than one word after Bearer; ${SEND}`;
}
