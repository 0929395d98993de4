import { describe, expect, it } from 'vitest';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import { VERIFY_WORDS } from '../../src/cli/commands/verify-emails/flags.js';
import { detectMapping, resolveColumn } from '../../src/pipeline/mapping/map-columns.js';
import type { RunWords } from '../../src/pipeline/types.js';
import { LIBRARY_WORDS } from '../../src/pipeline/words.js';
import { failure } from '../helpers/mapping.js';

/** Words that name every field in capitals, so each message shows which names went through them. */
const LOUD: RunWords = { ...CLI_WORDS, fieldName: (field) => field.toUpperCase() };

const RULE =
  'every row needs at least one of: prof_network_url; business_email; first_name + last_name + company_domain; first_name + last_name + company_name';

describe('a column the input lacks, in the words of each caller', () => {
  const missing = (words: RunWords | undefined, field = 'business_email') =>
    failure(() => detectMapping('contacts', ['Name', 'Email'], [], { [field]: 'Mail' }, { words }));

  it('contacts on the command line: the --map to fix it, or the mapping file to save again', () => {
    const err = missing(CLI_WORDS);
    expect(err).toMatchObject({
      code: 'MAPPING_INVALID',
      message:
        'business_email is mapped to column "Mail", which the input does not have; its columns are: "Name", "Email"',
      hint: 'Fix the name with --map business_email="Column", or re-create the mapping file with --save-mapping.',
      location: { column: 'Mail' },
    });
  });

  it('the library (by default): its options, never a flag', () => {
    for (const words of [undefined, LIBRARY_WORDS])
      expect(missing(words).hint).toBe(
        'Fix the name with map: { business_email: "Column" }, or re-create the mapping file with saveMapping.',
      );
  });

  it('verify-emails: the field is the email, and no mapping file is offered', () => {
    const err = missing(VERIFY_WORDS);
    expect(err).toMatchObject({
      message:
        'email is mapped to column "Mail", which the input does not have; its columns are: "Name", "Email"',
      hint: 'Fix the name with --map email="Column".',
    });
  });

  it('names through fieldName every input field, the full-name column too', () => {
    expect(missing(LOUD, 'first_name').message).toMatch(/^FIRST_NAME is mapped to column "Mail"/);
    expect(missing(LOUD, 'full_name').message).toMatch(/^FULL_NAME is mapped/);
    expect(
      failure(() =>
        detectMapping('companies', ['Name'], [], { company_website: 'Web' }, { words: LOUD }),
      ).message,
    ).toMatch(/^COMPANY_WEBSITE is mapped/);
  });

  it('an option naming a column (--id-column) is no field: named as given, with its own hint', () => {
    const err = failure(() => resolveColumn(['Name', 'Email'], 'Id', '--id-column', LOUD));
    expect(err).toMatchObject({
      message:
        '--id-column is mapped to column "Id", which the input does not have; its columns are: "Name", "Email"',
      hint: 'Give --id-column one of the columns above.',
    });
  });
});

describe('columns that all fit one field', () => {
  const header = ['Email', 'Email (2)'];
  const rows = [['ann@acme.com', 'bob@acme.com']];

  it('contacts: named as the API field; verify-emails: as the email; the details keep the field', () => {
    const cli = failure(() => detectMapping('contacts', header, rows, {}, { words: CLI_WORDS }));
    expect(cli).toMatchObject({
      code: 'MAPPING_AMBIGUOUS',
      message: 'cannot tell which column holds business_email: "Email", "Email (2)" all fit',
      hint: 'Choose one, e.g. --map business_email="Email" (or --map business_email="Email (2)")',
      details: { field: 'business_email', candidates: header },
    });
    const verify = failure(() =>
      detectMapping('contacts', header, rows, {}, { words: VERIFY_WORDS }),
    );
    expect(verify).toMatchObject({
      code: 'MAPPING_AMBIGUOUS',
      message: 'cannot tell which column holds email: "Email", "Email (2)" all fit',
      hint: 'Choose one, e.g. --map email="Email" (or --map email="Email (2)")',
      details: { field: 'business_email', candidates: header },
    });
  });
});

describe('a mapping no row can be sent with', () => {
  it('contacts: the rule in the API names, word for word', () => {
    const err = failure(() =>
      detectMapping('contacts', ['First Name', 'Title'], [], {}, { words: CLI_WORDS }),
    );
    expect(err.message).toBe(
      `no row can be sent with this mapping (mapped: first_name): ${RULE}; the input's columns are: "First Name", "Title"`,
    );
    expect(err.hint).toBe('Say which column holds what: --map field="Column" for each field.');
  });

  it('companies: the rule in the API names, word for word', () => {
    expect(
      failure(() => detectMapping('companies', ['Industry'], [], {}, { words: CLI_WORDS })).message,
    ).toBe(
      `no row can be sent with this mapping (no column was recognised): every row needs at least one of: company_website; company_name; the input's columns are: "Industry"`,
    );
  });

  it('every field of the rule and of what was mapped goes through fieldName', () => {
    const err = failure(() =>
      detectMapping('contacts', ['First Name', 'Title'], [], {}, { words: LOUD }),
    );
    expect(err.message).toBe(
      `no row can be sent with this mapping (mapped: FIRST_NAME): ${RULE.replace(/[a-z_]+(?= \+|;|$)/g, (f) => f.toUpperCase())}; the input's columns are: "First Name", "Title"`,
    );
    expect(
      failure(() => detectMapping('companies', ['Industry'], [], {}, { words: LOUD })).message,
    ).toContain('every row needs at least one of: COMPANY_WEBSITE; COMPANY_NAME;');
  });

  it('verify-emails with its email column unmapped: the email is "email"', () => {
    const unmapped = Object.fromEntries(
      [
        'first_name',
        'last_name',
        'company_domain',
        'company_name',
        'prof_network_url',
        'business_email',
        'full_name',
      ].map((f) => [f, '']),
    );
    const err = failure(() =>
      detectMapping('contacts', ['Id', 'Notes'], [['1', 'x']], unmapped, { words: VERIFY_WORDS }),
    );
    expect(err.message).toBe(
      `no row can be sent with this mapping (no column was recognised): every row needs at least one of: prof_network_url; email; first_name + last_name + company_domain; first_name + last_name + company_name; the input's columns are: "Id", "Notes"`,
    );
  });
});

describe('an unknown field', () => {
  it('is quoted as given; the fields expected are named through fieldName', () => {
    expect(
      failure(() =>
        detectMapping('companies', ['Name'], [], { e_mail: 'Name' }, { words: CLI_WORDS }),
      ).message,
    ).toBe('unknown field "e_mail" for companies: expected one of company_name, company_website');
    expect(
      failure(() => detectMapping('contacts', ['Name'], [], { e_mail: 'Name' }, { words: LOUD }))
        .message,
    ).toBe(
      'unknown field "e_mail" for contacts: expected one of BUSINESS_EMAIL, COMPANY_DOMAIN, COMPANY_NAME, FIRST_NAME, LAST_NAME, PROF_NETWORK_URL, FULL_NAME',
    );
  });
});
