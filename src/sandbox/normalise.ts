/** Normalising inputs: the same company or person written differently gets the same data. */

const MAGIC_NO_MATCH = 'nomatch';

/** Domain form of a website or URL: `https://www.Acme.com/about` -> `acme.com`. */
export function toDomain(website: string): string {
  let d = website.trim().toLowerCase();
  const scheme = d.indexOf('://');
  if (scheme >= 0) d = d.slice(scheme + 3);
  const cut = d.search(/[/?#:]/);
  if (cut >= 0) d = d.slice(0, cut);
  if (d.startsWith('www.')) d = d.slice(4);
  return d;
}

/** A URL-safe slug of a name: `Acme Corp, Inc.` -> `acme-corp-inc`. */
export function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Letters only, lower case: the local part of a generated email. */
export function letters(text: string): string {
  return text.toLowerCase().replace(/[^a-z]/g, '');
}

/** A company name read from a domain: `acme-corp.com` -> `Acme Corp`. */
export function nameFromDomain(domain: string): string {
  const label = domain.split('.')[0] ?? domain;
  return label
    .split(/[-_]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

/** True when any of the values contains `magic` (case-insensitive): documented forced outcomes. */
export function hasMagic(values: readonly (string | undefined)[], magic: string): boolean {
  for (const v of values) if (v !== undefined && v.toLowerCase().includes(magic)) return true;
  return false;
}

/** True when an input forces "no match" (any field containing `nomatch`). */
export function isNoMatch(values: readonly (string | undefined)[]): boolean {
  return hasMagic(values, MAGIC_NO_MATCH);
}

/** Free-mail domains: an address there says nothing about the employer. */
export const FREE_MAIL = new Set(['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com']);
