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
      ...(emailColumn ? { emailColumn } : {}),
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: expect.stringMatching(message), hint });
    expect((err as Error).message).not.toMatch(/business_email/);
  });
});
