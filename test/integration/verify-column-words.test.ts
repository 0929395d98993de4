import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyEmailsFile } from '../../src/index.js';
import { VERIFY_WORDS } from '../../src/cli/commands/verify-emails/flags.js';
import { tempDir } from './bulk-harness.js';

/**
 * `verify-emails` maps one column, `--map email=…`, and has no mapping file. Its mapping errors
 * named the contacts field it borrows (`business_email is mapped to column…`, `cannot tell which
 * column holds business_email`) and told the user to re-create a mapping file with
 * `--save-mapping`, a flag the command does not have.
 */
describe('verify-emails mapping errors in its own words', () => {
  it.concurrent.for([
    [
      'a column the file lacks',
      'Name,Email\nAnn,ann@acme.com\n',
      'Mail',
      /^email is mapped to column "Mail", which the input does not have/,
      'Fix the name with --map email="Column".',
    ],
    [
      'two columns that fit',
      'Email,Email\nann@acme.com,bob@acme.com\n',
      undefined,
      /^cannot tell which column holds email: "Email", "Email \(2\)" all fit/,
      'Choose one, e.g. --map email="Email" (or --map email="Email (2)")',
    ],
    [
      'a column the file lacks, in a list without rows',
      'Name,Company\n',
      'Work Email',
      /^email is mapped to column "Work Email", which the input does not have; its columns are: "Name", "Company"$/,
      'Fix the name with --map email="Column".',
    ],
    [
      // The user's column is quoted as given, even when it reads as the contacts field.
      'a column named business_email the file lacks',
      'Name,E-mail\nAnn,ann@acme.com\n',
      'business_email',
      /^email is mapped to column "business_email", which the input does not have/,
      'Fix the name with --map email="Column".',
    ],
    [
      // It was taken as contacts' "unmap the field", and the run failed in contacts' words: "no
      // row can be sent with this mapping …: every row needs at least one of: prof_network_url;
      // email; first_name + last_name + company_domain…". The CLI refuses it as it reads --map.
      'an email column named as nothing (--map email=)',
      'Id,Email\n1,ann@acme.com\n',
      '',
      /^--map email=: expected the name of the column holding the addresses, got ""$/,
      'Name the column as the header row spells it, e.g. --map email="Work Email", or leave --map email= out: the column is then found by its name and values.',
    ],
  ] as const)('%s', async ([, text, emailColumn, message, hint]) => {
    const dir = await tempDir('enrich-verify-words-');
    const input = join(dir, 'list.csv');
    await writeFile(input, text);
    const err = await verifyEmailsFile({
      input,
      output: join(dir, 'out.csv'),
      runsDir: join(dir, 'runs'),
      dryRun: true,
      words: VERIFY_WORDS,
      ...(emailColumn !== undefined ? { emailColumn } : {}),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: expect.stringMatching(message), hint });
    expect((err as Error).message).not.toMatch(/business_email(?!")/);
  });

  /** The error of a library dry run of a small list with `emailColumn`. */
  const libraryRefusal = async (emailColumn: string): Promise<{ err: unknown; input: string }> => {
    const dir = await tempDir('enrich-verify-words-');
    const input = join(dir, 'list.csv');
    await writeFile(input, 'Name,Email\nAnn,ann@acme.com\n');
    const err = await verifyEmailsFile({
      input,
      output: join(dir, 'out.csv'),
      runsDir: join(dir, 'runs'),
      dryRun: true,
      emailColumn,
    }).catch((e: unknown) => e);
    return { err, input };
  };

  it('in the library: emailColumn "" (or blank) is refused in its own words', async () => {
    const { err } = await libraryRefusal(' ');
    expect(err).toMatchObject({
      code: 'USAGE',
      message: 'emailColumn: expected the name of the column holding the addresses, got " "',
      hint: 'Name the column as the header row spells it, e.g. emailColumn: "Work Email", or leave emailColumn out: the column is then found by its name and values.',
    });
  });

  it('in the library: its emailColumn option, and no mapping file either', async () => {
    const { err, input } = await libraryRefusal('Mail');
    expect(err).toMatchObject({
      code: 'MAPPING_INVALID',
      message:
        'email is mapped to column "Mail", which the input does not have; its columns are: "Name", "Email"',
      hint: 'Fix the name with emailColumn: "Column".',
      location: { column: 'Mail', file: input },
    });
  });
});
