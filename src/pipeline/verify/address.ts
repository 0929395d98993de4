import { emailProblem } from '../../contract/email.js';

/**
 * The address a cell holds, as `verify-emails` sends and dedupes it: trimmed, the domain
 * lowercased (domains are case-insensitive, RFC 5321 section 2.4), the local part kept as
 * written: RFC 5321 lets a mail system tell `Jane` from `jane`, and most do not, but only
 * the mailbox's own system knows, so two spellings of a local part are two addresses (at
 * worst one verification too many, never a verdict given to the wrong address).
 */
export type CellAddress =
  | { kind: 'empty' }
  | { kind: 'bad'; value: string; problem: string }
  | { kind: 'address'; address: string };

/** Reads one cell: empty, not an address (the shared email rule says why), or its canonical address. */
export function addressOfCell(cell: string | undefined): CellAddress {
  const value = (cell ?? '').trim();
  if (value === '') return { kind: 'empty' };
  const problem = emailProblem(value);
  if (problem) return { kind: 'bad', value, problem };
  return { kind: 'address', address: canonicalAddress(value) };
}

/** An address (one the email rule takes) with its domain lowercased and its local part as written. */
export function canonicalAddress(value: string): string {
  const v = value.trim();
  const at = v.lastIndexOf('@'); // a quoted local part may hold an @; the domain never does
  return at < 0 ? v : `${v.slice(0, at)}@${v.slice(at + 1).toLowerCase()}`;
}
