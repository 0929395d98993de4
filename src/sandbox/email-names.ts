/**
 * The name an email address's local part reads as, so a generated contact agrees with the
 * address it was looked up by: `jane.doe@` is Jane Doe, `ana@` is Ana (a last name is then
 * generated), while `jdoe@`, `info@` or `x7@` read as no name and leave both generated.
 */

/** Local parts that name a role or a mailbox, never a person. */
const ROLE_WORDS = new Set([
  'admin',
  'billing',
  'contact',
  'hello',
  'help',
  'hi',
  'hr',
  'info',
  'jobs',
  'mail',
  'marketing',
  'news',
  'noreply',
  'office',
  'orders',
  'press',
  'sales',
  'support',
  'team',
  'webmaster',
]);

/** Consonant groups a name may start with (`Chris`, `Brian`, `Sven`); `jd…` or `xk…` it may not. */
const ONSETS = new Set(
  (
    'bl br ch cl cr dr dw fl fr gl gr kh kl kn kr ph pl pr sc sh sk sl sm sn sp st sv sw th tr tw wr zh ' +
    'chr sch scr shr spl spr str thr'
  ).split(' '),
);
const VOWEL = /[aeiouyàáâäãåèéêëìíîïòóôöõùúûüý]/;

/** True when `word` can be a given or family name: letters only, and it starts as names do. */
export function readsAsName(word: string): boolean {
  const w = word.toLowerCase();
  if (w.length < 2 || w.length > 24 || !/^\p{L}+$/u.test(w) || ROLE_WORDS.has(w)) return false;
  // A vowel after no consonant, one, or a group names start with.
  for (const n of [0, 1, 2, 3]) {
    if (n >= 2 && !ONSETS.has(w.slice(0, n))) continue;
    if (VOWEL.test(w[n] ?? '')) return true;
  }
  return false;
}

/** `jane` -> `Jane`, `josé` -> `José`. */
function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}

/**
 * The first and last name a local part reads as (either may be undefined): two or more
 * parts split on `.`, `_` or `-` give the first and the second, one part gives the first.
 * Tags (`+news`) are ignored.
 */
export function namesOfLocalPart(local: string): { first?: string; last?: string } {
  const parts =
    local
      .split('+')[0]
      ?.split(/[._-]/)
      .filter((p) => p !== '') ?? [];
  if (parts.length >= 2) {
    const [a, b] = parts as [string, string];
    // `j.doe`: an initial is still what the address says of the first name.
    const first = readsAsName(a) || /^\p{L}$/u.test(a) ? capital(a) : undefined;
    return { first, last: readsAsName(b) ? capital(b) : undefined };
  }
  const [only] = parts;
  return only && readsAsName(only) ? { first: capital(only) } : {};
}
