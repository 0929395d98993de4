/** The outcome of verifying one email: magic local parts force `invalid` and `unknown`. */
export function verifyEmailStatus(email: string): 'valid' | 'invalid' | 'unknown' {
  const local = email.slice(0, email.lastIndexOf('@')).toLowerCase();
  if (local.startsWith('invalid')) return 'invalid';
  if (local.startsWith('unknown')) return 'unknown';
  return 'valid';
}
