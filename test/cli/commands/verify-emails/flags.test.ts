import { describe, expect, it } from 'vitest';
import { verifyOptionsOf } from '../../../../src/cli/commands/verify-emails/flags.js';
import { EnrichError } from '../../../../src/errors.js';

function usage(fn: () => unknown): EnrichError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EnrichError);
    expect((err as EnrichError).exitCode).toBe(2);
    return err as EnrichError;
  }
  throw new Error('expected a usage error');
}

/**
 * verify-emails' `--map` names one column, the email. `--map email=` (nothing after `=`) was
 * taken as "unmap the email", as for contacts, and the run then failed in contacts' words: "no
 * row can be sent with this mapping …: every row needs at least one of: prof_network_url;
 * email; first_name + last_name + company_domain…", with a hint to try `enrich companies`.
 */
describe('verify-emails --map', () => {
  it('names the email column (email= or business_email=)', () => {
    expect(verifyOptionsOf({ map: ['email=Work Email'] }).emailColumn).toBe('Work Email');
    expect(verifyOptionsOf({ map: ['business_email= Mail '] }).emailColumn).toBe('Mail');
    expect(verifyOptionsOf({}).emailColumn).toBeUndefined();
  });

  it.each(['email=', 'email=  ', 'business_email='])(
    '%j (no column after "=") is refused in its words: the flag, what is missing, how to fix it',
    (value) => {
      const field = value.slice(0, value.indexOf('='));
      const err = usage(() => verifyOptionsOf({ map: [value] }));
      expect(err.message).toBe(
        `--map ${field}=: no column after "${field}="; expected the name of the column holding the addresses, e.g. --map ${field}="Work Email"`,
      );
      expect(err.hint).toBe(
        'Name the column as the header row spells it (quoted if it holds spaces), or leave out --map: the column is then found by its name and values (--dry-run shows which).',
      );
    },
  );

  it('"=Email" (no field) shows the form verify-emails takes, not a contacts field', () => {
    expect(usage(() => verifyOptionsOf({ map: ['=Email'] })).message).toBe(
      '--map: expected email=Column (e.g. email="Work Email"), got "=Email"',
    );
  });

  it('another field is refused, as before', () => {
    expect(usage(() => verifyOptionsOf({ map: ['first_name=First'] })).message).toBe(
      '--map first_name=…: verify-emails maps only the email column (--map email="Column")',
    );
  });
});
