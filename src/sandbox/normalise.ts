/** Normalising inputs: the same company or person written differently gets the same data. */

import { fnv1a, mix } from './hash.js';

/** Words that force an outcome when any input field contains them (case-insensitive). */
export const MAGIC = { noMatch: 'nomatch', noEmail: 'noemail', noMobile: 'nomobile' } as const;

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

/** Letters NFD does not split into a base letter and a mark, written as Latin letters. */
const LATIN_OF: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'SS',
  æ: 'ae',
  Æ: 'Ae',
  œ: 'oe',
  Œ: 'Oe',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'Th',
  ı: 'i',
  ħ: 'h',
  Ħ: 'H',
  ŋ: 'ng',
  Ŋ: 'Ng',
};
const SPECIAL = new RegExp(`[${Object.keys(LATIN_OF).join('')}]`, 'g');

/**
 * Latin letters for accented ones, as a mail system or a domain would have them:
 * `Lefèvre` -> `Lefevre`, `Groß` -> `Gross`, `Søren Łukasz` -> `Soren Lukasz`. NFD splits an
 * accented letter into its base and marks, which are dropped; the few letters NFD keeps
 * whole (ß, æ, ø, ł…) come from a table. Other scripts are left as they are.
 */
export function transliterate(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text; // most names: nothing to do
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(SPECIAL, (ch) => LATIN_OF[ch] ?? ch);
}

/** A URL-safe slug of a name: `Acme Corp, Inc.` -> `acme-corp-inc`, `Société` -> `societe`. */
export function slug(name: string): string {
  return transliterate(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Letters only, lower case: the local part of a generated email. */
export function letters(text: string): string {
  return transliterate(text)
    .toLowerCase()
    .replace(/[^a-z]/g, '');
}

// No vowel first (never `invalid…`/`unknown…`, the verification magic) and no `n` (never
// `nomatch`, `noemail`, `nomobile`): a generated word is never a magic input.
const CONSONANTS = 'bdfghklmprstvz';
const VOWELS = 'aeiou';

/**
 * A pronounceable ASCII word of 8 letters drawn from the hash of `text` (case-insensitive),
 * e.g. `kotamibu`: stands in for a name with no Latin letters (`李`, `株式会社`), so every
 * such name still gets its own deterministic email, domain and handle.
 */
export function pseudoWord(text: string): string {
  const h = fnv1a(text.toLowerCase());
  let out = '';
  for (let i = 0; i < 4; i++) {
    const m = mix(h, i);
    out += `${CONSONANTS[m % CONSONANTS.length]}${VOWELS[(m >>> 8) % VOWELS.length]}`;
  }
  return out;
}

/** The letters of a name for an email local part, or a pseudo word when it has none. */
export function localWord(text: string): string {
  return letters(text) || pseudoWord(text);
}

/** The slug of a name, or a pseudo word when it has no Latin letters or digits: never "". */
export function handle(name: string): string {
  return slug(name) || pseudoWord(name);
}

/** A slug cut to the 63 characters a domain label may hold (RFC 1035). */
export function domainLabel(slugText: string): string {
  return slugText.length <= 63 ? slugText : slugText.slice(0, 63).replace(/-+$/, '');
}

/** A company name read from a domain: `acme-corp.com` -> `Acme Corp`. */
export function nameFromDomain(domain: string): string {
  const dot = domain.indexOf('.');
  const label = dot < 0 ? domain : domain.slice(0, dot);
  let out = '';
  let upper = true;
  for (let i = 0; i < label.length; i++) {
    const ch = label[i] as string;
    if (ch === '-' || ch === '_') {
      if (!upper) out += ' ';
      upper = true;
    } else {
      out += upper ? ch.toUpperCase() : ch;
      upper = false;
    }
  }
  return out.trimEnd();
}

/** True when any of the values contains `magic` (case-insensitive): documented forced outcomes. */
export function hasMagic(values: readonly (string | undefined)[], magic: string): boolean {
  for (const v of values) if (v !== undefined && v.toLowerCase().includes(magic)) return true;
  return false;
}

/** True when an input forces "no match" (any field containing `nomatch`). */
export function isNoMatch(values: readonly (string | undefined)[]): boolean {
  return hasMagic(values, MAGIC.noMatch);
}

/** Free-mail domains: an address there says nothing about the employer. */
export const FREE_MAIL = new Set(['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com']);
