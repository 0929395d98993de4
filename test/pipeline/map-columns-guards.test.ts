import { describe, expect, it } from 'vitest';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import { detectMapping, resolveColumn } from '../../src/pipeline/mapping/map-columns.js';
import { failure, mapped } from '../helpers/mapping.js';

/**
 * The rules of column detection at their edges: which column a name finds, the shares of fitting
 * values a column needs, what a hand mapping settles, and when another kind is suggested. Each
 * test names the behaviour a mutant of `map-columns.ts` broke without a test failing.
 */

/** One column of `n` samples: `k` of `fit`, the rest `other`. */
const column = (n: number, k: number, fit: string, other: string) =>
  Array.from({ length: n }, (_, i) => (i < k ? fit : other));

/** Rows from columns of samples. */
const rowsOf = (...columns: string[][]) => columns[0]!.map((_, r) => columns.map((c) => c[r]!));

describe('resolveColumn: the column a name finds', () => {
  it('the name as written wins over one that only folds to it ("Société" in both forms, two columns)', () => {
    const nfc = 'Soci\u00e9t\u00e9';
    const nfd = 'Soci\u0065\u0301t\u0065\u0301';
    expect(resolveColumn([nfc, nfd], nfd, 'company_name')).toBe(1);
    expect(resolveColumn([nfc, nfd], nfc, 'company_name')).toBe(0);
  });

  it('folds the case and the spaces around a name, and keeps apart letters that differ ("Maße" is not "Masse")', () => {
    expect(resolveColumn(['Email', 'Name'], '  name ', 'first_name')).toBe(1);
    expect(resolveColumn(['Maße', 'Masse'], 'MASSE', 'company_name')).toBe(1);
  });
});

describe('detectMapping: what a hand mapping settles', () => {
  it('a column of spaces maps nothing, as an empty one does', () => {
    expect(mapped('contacts', ['Email', 'Company'], [], { company_name: '   ' })).toEqual({
      business_email: 'Email',
    });
  });

  it('full_name is a field of contacts only', () => {
    expect(
      failure(() => detectMapping('companies', ['Name'], [], { full_name: 'Name' })).message,
    ).toBe(
      'unknown field "full_name" for companies: expected one of company_name, company_website',
    );
  });

  it('a full name mapped by hand is the name sent: first and last name columns beside it are left alone', () => {
    expect(
      detectMapping('contacts', ['Full Name', 'First Name', 'Last Name', 'Email'], [], {
        full_name: 'Full Name',
      }),
    ).toEqual({ fields: { business_email: 3 }, split: { column: 0 } });
  });

  it('a first or a last name unmapped on purpose: no full-name column is looked for', () => {
    for (const field of ['first_name', 'last_name'])
      expect(mapped('contacts', ['Name', 'Email'], [], { [field]: '' })).toEqual({
        business_email: 'Email',
      });
  });
});

describe('detectMapping: names', () => {
  it('a first or a last name column alone keeps a "Name" column from being a full name (duplicates no tie)', () => {
    expect(mapped('contacts', ['Name', 'First Name', 'Email', 'Name'])).toEqual({
      business_email: 'Email',
      first_name: 'First Name',
    });
    expect(mapped('contacts', ['Name', 'Last Name', 'Email', 'Name'])).toEqual({
      business_email: 'Email',
      last_name: 'Last Name',
    });
  });

  it('a companies file has no full name to split: its contact person column is left alone', () => {
    const header = ['Company', 'Full Name'];
    expect(detectMapping('companies', header, [['Acme', 'Jane Doe']])).toEqual({
      fields: { company_name: 0 },
    });
  });

  it('duplicates past nine tie as the first nine do', () => {
    const err = failure(() =>
      detectMapping('contacts', ['Email', 'Email (10)'], [['a@acme.com', 'b@acme.com']]),
    );
    expect(err).toMatchObject({
      code: 'MAPPING_AMBIGUOUS',
      details: { candidates: ['Email', 'Email (10)'] },
    });
  });

  it('an ambiguity names the columns that tie, not every column that fits', () => {
    const header = ['Email', 'Email (2)', 'Other'];
    const err = failure(() =>
      detectMapping('contacts', header, [['a@acme.com', 'b@acme.com', 'c@acme.com']]),
    );
    expect(err).toMatchObject({
      message: 'cannot tell which column holds business_email: "Email", "Email (2)" all fit',
      details: { field: 'business_email', candidates: ['Email', 'Email (2)'] },
    });
  });
});

describe('detectMapping: values', () => {
  it('an unnamed column of profile URLs is found by its values, as one of emails is', () => {
    const rows = [
      ['x', 'https://www.linkedin.com/in/jane'],
      ['y', 'https://www.linkedin.com/in/bob'],
    ];
    expect(mapped('contacts', ['Col A', 'Col B'], rows)).toEqual({ prof_network_url: 'Col B' });
  });

  it('a column found by its values alone needs four in five of them', () => {
    const names = column(5, 5, 'Jane', '');
    const four = rowsOf(names, column(5, 4, 'jane@acme.com', 'n/a'));
    expect(mapped('contacts', ['Col A', 'Col B'], four)).toEqual({ business_email: 'Col B' });
    const three = rowsOf(names, column(5, 3, 'jane@acme.com', 'n/a'));
    expect(failure(() => mapped('contacts', ['Col A', 'Col B'], three)).code).toBe(
      'MAPPING_INVALID',
    );
  });

  it('a named column whose rows stop short of it is taken by its name', () => {
    expect(mapped('contacts', ['Id', 'Email'], [['1'], ['2']])).toEqual({
      business_email: 'Email',
    });
  });

  it('of two equally named columns, the one with values wins over the empty one', () => {
    const rows = [['', 'Jane', 'jane@acme.com']];
    expect(mapped('contacts', ['First Name', 'Given Name', 'Email'], rows)).toEqual({
      business_email: 'Email',
      first_name: 'Given Name',
    });
  });

  it("a companies file's website column of company profile pages is no website", () => {
    const rows = [['Acme', 'https://www.linkedin.com/company/acme']];
    expect(mapped('companies', ['Company', 'Company URL'], rows)).toEqual({
      company_name: 'Company',
    });
  });

  it('a website column needs half its values to be websites', () => {
    const half = rowsOf(column(2, 2, 'Acme', ''), column(2, 1, 'acme.com', 'n/a'));
    expect(mapped('companies', ['Company', 'Website'], half)).toEqual({
      company_name: 'Company',
      company_website: 'Website',
    });
    const less = rowsOf(column(5, 5, 'Acme', ''), column(5, 2, 'acme.com', 'n/a'));
    expect(mapped('companies', ['Company', 'Website'], less)).toEqual({ company_name: 'Company' });
  });

  it('a name column needs 30% of text: a "Name" column of emails is an email column', () => {
    const emails = [
      ['ann@acme.com', 'Acme'],
      ['bob@globex.com', 'Globex'],
    ];
    expect(mapped('contacts', ['Name', 'Company'], emails)).toEqual({
      business_email: 'Name',
      company_name: 'Company',
    });
    const email = column(10, 10, 'jane@acme.com', '');
    const most = rowsOf(email, column(10, 3, 'Acme Inc', 'acme.com'));
    expect(mapped('contacts', ['Email', 'Company'], most)).toEqual({
      business_email: 'Email',
      company_name: 'Company',
    });
    const few = rowsOf(email, column(10, 2, 'Acme Inc', 'acme.com'));
    expect(mapped('contacts', ['Email', 'Company'], few)).toEqual({ business_email: 'Email' });
  });
});

describe('detectMapping: a file of the other kind', () => {
  const hint = (other: string) =>
    `These columns look like a ${other} file: try enrich ${other}. Or say which column holds what: --map field="Column" for each field.`;

  it('a companies file given to contacts, and a contacts file given to companies, are said so', () => {
    const companies = failure(() =>
      detectMapping(
        'contacts',
        ['Company', 'Website'],
        [['Acme', 'acme.com']],
        {},
        {
          words: CLI_WORDS,
        },
      ),
    );
    expect(companies).toMatchObject({
      hint: hint('companies'),
      details: { fitsKind: 'companies' },
    });
    const contacts = failure(() =>
      detectMapping(
        'companies',
        ['First Name', 'Last Name', 'Email'],
        [['Jane', 'Doe', 'jane@acme.com']],
        {},
        { words: CLI_WORDS },
      ),
    );
    expect(contacts).toMatchObject({ hint: hint('contacts'), details: { fitsKind: 'contacts' } });
  });

  it('not for a mapping file (nothing detected), nor for columns the other kind cannot tell apart', () => {
    const plain = 'Say which column holds what: --map field="Column" for each field.';
    const file = failure(() =>
      detectMapping(
        'contacts',
        ['Company', 'Website'],
        [['Acme', 'acme.com']],
        { company_name: 'Company' },
        { auto: false, words: CLI_WORDS },
      ),
    );
    expect(file.hint).toBe(plain);
    expect(file.details).toBeUndefined();
    // As contacts: the work email, then two first names that tie.
    const ambiguous = failure(() =>
      detectMapping(
        'companies',
        ['Work Email', 'First Name', 'First Name (2)'],
        [['jane@acme.com', 'Jane', 'Janet']],
        {},
        { words: CLI_WORDS },
      ),
    );
    expect(ambiguous.hint).toBe(plain);
    expect(ambiguous.details).toBeUndefined();
  });
});
