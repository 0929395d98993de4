// Text that is in NFC as it is: characters that never change under NFC, never combine with the
// one before, and have no combining class (so any string of them is NFC): everything below
// U+0300 (ASCII, Latin-1 and Latin Extended as Windows and most exports write names), Cyrillic
// without its combining marks, kana without the voicing marks, CJK ideographs and Hangul
// syllables. A value of these costs one regex test; only others (combining marks, other
// scripts) go through the normaliser. The test of `nfc` holds it equal to String.normalize.
// (Written as what is not these. Ranges of code units, never a character and its mark together.)
const NOT_NFC_SAFE =
  // eslint-disable-next-line no-misleading-character-class
  /[\u0300-\u03ff\u0483-\u0489\u0500-\u3040\u3097-\u30a0\u30fb-\u4dff\ua000-\uabff\ud7a4-\uffff]/;

/**
 * The value in Unicode NFC: "José" typed on a Mac (an `e` and a combining acute, NFD) and
 * on Windows (one `é`) is one name, one request, one cache key. Used on what is sent and what
 * it is keyed by, never on the cells written out (they stay as read).
 */
export function nfc(value: string): string {
  return NOT_NFC_SAFE.test(value) ? value.normalize('NFC') : value;
}

// Whitespace other than single spaces (runs, tabs, newlines, NBSP): rare, so test before replacing.
const MESSY_SPACE = /\s\s|[^\S ]/;

/** Trims and collapses inner runs of whitespace (names, company names). */
export function normalizeText(value: string): string {
  const t = value.trim();
  return MESSY_SPACE.test(t) ? t.replace(/\s+/g, ' ') : t;
}

const HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i;

// Already a bare lowercase domain (no scheme, no www., no path): nothing to reduce. Its last
// label starts with a letter: one that is a number (`10.1`, `0.0x7f`) makes the URL parser read
// the host as an IPv4 address (`10.0.0.1`, `0.0.0.127`), as it does with a scheme in front.
const PLAIN_HOST = /^(?!www\d?\.)[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z][a-z0-9-]*$/;

interface ParsedSite {
  host: string;
  /** True when nothing but the host matters (no path beyond "/", only tracking query/fragment). */
  bare: boolean;
}

/** Reads "https://www.Acme.com/", "acme.com", "www.acme.com/about" as host + whether a path follows. */
function parseSite(value: string): ParsedSite | undefined {
  const v = value.trim();
  if (v === '' || /\s/.test(v) || v.includes('@')) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `http://${v}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password) return undefined;
  const host = url.hostname.toLowerCase().replace(/^www\d?\./, '');
  if (!HOST.test(host)) return undefined;
  const onlyTracking = [...url.searchParams.keys()].every((k) =>
    /^utm_|^ref$|^gclid$|^fbclid$/i.test(k),
  );
  return { host, bare: (url.pathname === '/' || url.pathname === '') && onlyTracking };
}

// "https://www.Acme.com/", "acme.com", "WWW.ACME.COM": an http(s) scheme or none, a host name of
// ASCII labels and at most a "/" after it. No port, user, query, IDN (xn--) or IPv4 (the last
// label starts with a letter): for these the URL parser's host is the lowercased name, which
// the test "a simple site's host is the URL parser's" checks on generated values.
const SIMPLE_SITE = /^(?:https?:\/\/)?([a-z0-9.-]+?)\/?$/i;
const LETTER_TLD = /\.[a-z][a-z0-9-]*$/;

/** The host of a simple site (SIMPLE_SITE) without `www.`; undefined for anything else. */
function simpleHost(value: string): string | undefined {
  const m = SIMPLE_SITE.exec(value);
  if (!m) return undefined;
  const host = m[1]!.toLowerCase().replace(/^www\d?\./, '');
  if (!HOST.test(host) || !LETTER_TLD.test(host) || host.includes('xn--')) return undefined;
  return host;
}

/**
 * The two normalisations through the URL parser alone: what normalizeDomain and
 * normalizeWebsite do with any value their shortcuts do not take (and, in the test that holds
 * the shortcuts equal to it, with every value).
 */
export const normalizeByUrl = {
  domain: (value: string) => parseSite(value)?.host ?? value.trim(),
  website: (value: string) => {
    const site = parseSite(value);
    return site?.bare ? site.host : value.trim();
  },
};

/** `company_domain` needs a domain: a URL is reduced to its host ("https://www.acme.com/x" -> "acme.com"); anything else is only trimmed. */
export function normalizeDomain(value: string): string {
  if (PLAIN_HOST.test(value)) return value; // the common case, without a URL parse
  return simpleHost(value) ?? normalizeByUrl.domain(value);
}

/** `company_website` takes a URL or a domain: reduced to the domain only when no path would be lost. */
export function normalizeWebsite(value: string): string {
  if (PLAIN_HOST.test(value)) return value;
  return simpleHost(value) ?? normalizeByUrl.website(value);
}

// A URL or host most values are: a host name with a letter TLD, then a path or nothing.
const PLAIN_URL = /^(?:https?:\/\/)?[a-z0-9.-]+\.[a-z][a-z0-9-]*(?:[/?#][^\s]*)?$/i;

/**
 * Why a normalised `company_domain`, `company_website` or `prof_network_url` is plainly no
 * site (`n/a`, `acme .com`, `not a url`), or undefined. The wire takes any string, but a lookup
 * by such a value cannot be right: the row goes without it, or is invalid (validateRow).
 */
export function siteProblem(kind: 'domain' | 'url', value: string): string | undefined {
  if (/\s/.test(value)) return 'it contains a space';
  if (kind === 'domain' ? HOST.test(value) : PLAIN_URL.test(value) || parseSite(value))
    return undefined;
  if (/^[^@/]+@[^@/]+$/.test(value)) return 'it is an email address';
  return kind === 'domain'
    ? 'it is not a host name such as acme.com'
    : 'it is not a web address such as acme.com or https://acme.com/about';
}

/** Trims an email address (case is kept for sending; the dedupe key folds it). */
export function normalizeEmail(value: string): string {
  return value.trim();
}

const HONORIFICS = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'sir', 'dame']);
const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'phd', 'md', 'mba', 'esq', 'cpa']);
const bare = (w: string) => w.toLowerCase().replace(/[.,]/g, '');

/** Splits "Jane Doe", "Dr. Jane van der Berg Jr." or "Doe, Jane" into first and last name. */
export function splitFullName(value: string): { first: string; last: string } {
  const v = normalizeText(value);
  const comma = v.indexOf(',');
  if (comma > 0) {
    const last = v.slice(0, comma).trim();
    const rest = v.slice(comma + 1).trim();
    // "Doe, Jane" but not "Jane Doe, PhD".
    if (rest !== '' && !SUFFIXES.has(bare(rest)))
      return { first: splitFullName(rest).first || rest, last };
  }
  const words = v.split(' ').filter((w) => w !== '');
  while (words.length > 1 && HONORIFICS.has(bare(words[0]!))) words.shift();
  while (words.length > 1 && SUFFIXES.has(bare(words[words.length - 1]!))) words.pop();
  const cleaned = words.map((w, i) => (i === words.length - 1 ? w.replace(/,$/, '') : w));
  if (cleaned.length === 0) return { first: '', last: '' };
  if (cleaned.length === 1) return { first: cleaned[0]!, last: '' };
  return { first: cleaned[0]!, last: cleaned.slice(1).join(' ') };
}
