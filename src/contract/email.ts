/**
 * The one email rule of the client and the sandbox: what a mail system accepts (RFC 5321/5322
 * with RFC 6531's UTF-8), no more. Bulk validation, `enrich contact --email`,
 * `enrich verify-email` and the sandbox's POST /email-verification all ask `emailProblem`,
 * so an address one of them takes is taken by all.
 *
 * - one `@` between a local part and a domain; the local part is a dot-atom
 *   (`jane.doe+news`, `a!b`, `josé`) or a quoted string (`"john doe"@acme.com`, which may
 *   hold spaces and `@`);
 * - the domain is dot-separated labels of letters (any script), digits and inner hyphens
 *   (`exämple.de`), with at least one dot (`user@localhost` reaches no business), or an
 *   address literal (`[192.0.2.1]`);
 * - no whitespace or control character outside quotes, at most 254 characters in all,
 *   no `mailto:`.
 */

/** Letters and marks of any script, digits, and the specials RFC 5322 allows unquoted. */
const ATOM = String.raw`[\p{L}\p{M}\p{N}!#$%&'*+\-/=?^_\x60{|}~]+`;
const DOT_ATOM = new RegExp(String.raw`^${ATOM}(?:\.${ATOM})*$`, 'u');
/** Any character but a bare quote, backslash or line break; a backslash escapes one. */
const QUOTED = /^"(?:[^"\\\r\n]|\\[^\r\n])+"$/u;
const LABEL = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u;
const LITERAL = /^\[[^[\]\\\s]+\]$/u;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/u;

/** The longest address a mail system takes (RFC 5321's path limit less its brackets). */
export const EMAIL_MAX_LENGTH = 254;

/**
 * Most addresses are plain ASCII (`jane.doe+news@acme.co.uk`): a dot-atom of ASCII specials,
 * `@`, and a host name of ASCII labels with inner hyphens. Each of these the full rule takes
 * (test: "a plain address passes the full rule"), and one regex says so faster than the
 * rule's Unicode classes and split labels.
 */
const PLAIN_EMAIL =
  /^[A-Za-z0-9!#$%&'*+\-/=?^_\x60{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_\x60{|}~]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** Why `value` is not an email address a mail system would take, or undefined when it is. */
export function emailProblem(value: string): string | undefined {
  if (value.length <= EMAIL_MAX_LENGTH && PLAIN_EMAIL.test(value)) return undefined;
  return emailProblemByRule(value);
}

/** emailProblem without its shortcut for plain addresses: the rule itself. */
export function emailProblemByRule(value: string): string | undefined {
  if (value === '') return 'it is empty';
  if (value.length > EMAIL_MAX_LENGTH)
    return `it is longer than ${EMAIL_MAX_LENGTH} characters (got ${value.length})`;
  if (/^mailto:/i.test(value)) return `it starts with "mailto:"; the address is what follows`;
  const at = splitAt(value);
  if (typeof at === 'string') return at;
  const { local, domain } = at;
  if (local === '') return 'it has nothing before the @';
  if (domain === '') return 'it has nothing after the @';
  if (!local.startsWith('"')) {
    if (/\s/u.test(local)) return spaceProblem(local);
    if (CONTROL.test(local)) return 'it contains a control character';
    if (!DOT_ATOM.test(local)) return `its local part "${local}" is not one a mail system takes`;
  } else if (!QUOTED.test(local)) return 'its quoted local part is not closed properly';
  return domainProblem(domain);
}

/** True when `value` is an email address a mail system would take. */
export function isEmailAddress(value: string): boolean {
  return emailProblem(value) === undefined;
}

/** Splits at the one `@` outside a leading quoted local part, or says why it cannot. */
function splitAt(value: string): { local: string; domain: string } | string {
  let end = 0;
  if (value.startsWith('"')) {
    end = 1;
    while (end < value.length && value[end] !== '"') end += value[end] === '\\' ? 2 : 1;
    if (end >= value.length) return 'its quoted local part is not closed';
    end++;
  }
  const at = value.indexOf('@', end);
  if (at < 0) return 'it has no @';
  if (value.indexOf('@', at + 1) >= 0) return 'it contains more than one @';
  return { local: value.slice(0, at), domain: value.slice(at + 1) };
}

/** What white space a part of an address holds: a line break (a cell pasted from a note) or a space. */
function spaceProblem(part: string): string {
  if (/[\r\n\u2028\u2029]/.test(part)) return 'it contains a line break';
  return /\t/.test(part) ? 'it contains a tab' : 'it contains a space';
}

function domainProblem(domain: string): string | undefined {
  if (/\s/u.test(domain)) return spaceProblem(domain);
  if (LITERAL.test(domain)) return undefined;
  const labels = domain.split('.');
  if (labels.length < 2) return `its domain "${domain}" has no dot`;
  if (labels.some((l) => !LABEL.test(l))) return `its domain "${domain}" is not a host name`;
  return undefined;
}
