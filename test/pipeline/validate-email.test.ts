import { describe, expect, it } from 'vitest';
import { emailNote, leftOutNote, validateRow } from '../../src/pipeline/mapping/validate.js';

const mapping = { fields: { business_email: 0, first_name: 1, last_name: 2, company_name: 3 } };
const header = ['Email', 'First', 'Last', 'Company'];
const check = (...cells: string[]) =>
  validateRow('contacts', mapping, { index: 0, line: 2, cells }, { header });

describe('the email rule in bulk validation (regression: "jane doe@acme.com", "foo", "bad@" were sent and paid for)', () => {
  it('refuses a row whose only way in is a bad address, naming the column and the reason', () => {
    for (const [email, what] of [
      ['jane doe@acme.com', 'a space'],
      ['jane@acme .com', 'a space'],
      ['jane\t@acme.com', 'a tab'],
      // A cell pasted from a note (session 25: said "a space").
      ['jane\r\n@acme.com', 'a line break'],
      ['jane@acme\n.com', 'a line break'],
    ] as const)
      expect(check(email, '', '', '')).toEqual({
        ok: false,
        error: `business_email: not an email address (it contains ${what})`,
        column: 'Email',
      });
    for (const [email, why] of [
      ['jane@@acme.com', 'it contains more than one @'],
      ['foo', 'it has no @'],
      ['bad@', 'it has nothing after the @'],
      ['@x.com', 'it has nothing before the @'],
      ['mailto:a@b.com', 'it starts with "mailto:"; the address is what follows'],
    ])
      expect(check(email!, '', '', '')).toMatchObject({
        ok: false,
        error: `business_email: not an email address (${why})`,
      });
  });

  it('sends a row that holds another complete combination without the bad address, and says so', () => {
    const v = check('jane doe@acme.com', 'Jane', 'Doe', 'Acme');
    expect(v).toMatchObject({
      ok: true,
      fields: { first_name: 'Jane', last_name: 'Doe', company_name: 'Acme' },
    });
    expect(v.ok && 'business_email' in v.fields).toBe(false);
    // Its key is the key of the same row without an email: the same lookup, sent once.
    expect(v.ok && v.key).toBe((check('', 'Jane', 'Doe', 'Acme') as { key: string }).key);
    const row = { index: 0, line: 2, cells: ['jane doe@acme.com', 'Jane', 'Doe', 'Acme'] };
    expect(emailNote(mapping, row)).toBe(
      'business_email left out (not an email address: it contains a space); sent without it',
    );
    expect(emailNote(mapping, { ...row, cells: ['jane@acme.com', 'Jane'] })).toBeUndefined();
  });

  it('keeps addresses with spaces only around them (trimmed), and what mail systems take', () => {
    expect(check(' jane@acme.com ', '', '', '')).toMatchObject({
      ok: true,
      fields: { business_email: 'jane@acme.com' },
    });
    for (const email of ['jane+tag@acme.com', 'a!b@example.com', 'josé@exämple.de', '"j d"@x.io'])
      expect(check(email, '', '', '').ok).toBe(true);
  });
});

describe('a JSON object or array in a mapped column (regression: {"name":"Acme"} was sent and paid for as a company name)', () => {
  const jsonRow = (cells: string[], nested: boolean[]) => ({ index: 0, line: 2, cells, nested });
  const obj = '{"name":"Acme","domain":"acme.com"}';

  it('is left out of the request; a row with nothing else to go on is invalid and says which column', () => {
    const v = validateRow(
      'contacts',
      mapping,
      jsonRow(['', 'Jane', 'Doe', obj], [false, false, false, true]),
      {
        header,
      },
    );
    expect(v).toEqual({
      ok: false,
      error:
        'company_name left out (column "Company" holds a JSON object or array, not text); needs at least one of: prof_network_url; business_email; first_name + last_name + company_domain; first_name + last_name + company_name',
    });
  });

  it('a row with another complete combination is sent without it, keyed as the row without it, and the note says so', () => {
    const r = jsonRow(['jane@acme.com', 'Jane', 'Doe', '["Acme"]'], [false, false, false, true]);
    const v = validateRow('contacts', mapping, r, { header });
    expect(v).toMatchObject({
      ok: true,
      fields: { business_email: 'jane@acme.com', first_name: 'Jane', last_name: 'Doe' },
    });
    expect(v.ok && 'company_name' in v.fields).toBe(false);
    expect(v.ok && v.key).toBe((check('jane@acme.com', 'Jane', 'Doe', '') as { key: string }).key);
    expect(leftOutNote(mapping, r, header)).toBe(
      'company_name left out (column "Company" holds a JSON object or array, not text); sent without it',
    );
    // Both notes, when the email is bad too; none for a row sent whole.
    const both = jsonRow(['bad@', 'Jane', 'Doe', obj], [false, false, false, true]);
    expect(
      leftOutNote(
        { fields: { ...mapping.fields, prof_network_url: 4 } },
        { ...both, cells: [...both.cells, 'https://prof.example/in/jd'] },
        header,
      ),
    ).toBe(
      'company_name left out (column "Company" holds a JSON object or array, not text); sent without it; business_email left out (not an email address: it has nothing after the @); sent without it',
    );
    expect(
      leftOutNote(
        mapping,
        { index: 0, line: 2, cells: ['jane@acme.com', 'Jane', 'Doe', 'Acme'] },
        header,
      ),
    ).toBeUndefined();
  });

  it('a nested full-name column is no name either, and a nested column nothing maps to changes nothing', () => {
    const split = { fields: { company_name: 1 }, split: { column: 0 } };
    const v = validateRow('contacts', split, jsonRow(['{"first":"Jane"}', 'Acme'], [true, false]), {
      header: ['Name', 'Company'],
    });
    expect(v).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^first_name\/last_name left out \(column "Name" holds/),
    });
    const unmapped = jsonRow(
      ['jane@acme.com', 'Jane', 'Doe', 'Acme', '{}'],
      [false, false, false, false, true],
    );
    expect(validateRow('contacts', mapping, unmapped).ok).toBe(true);
    // ...and the row was sent whole: no note (not an empty one).
    expect(leftOutNote(mapping, unmapped, header)).toBeUndefined();
  });

  it('a nested email column is named once (as nested, not also as a bad address), by its number when there is no header', () => {
    const r = jsonRow(
      ['{"work":"jane@acme.com"}', 'Jane', 'Doe', 'Acme'],
      [true, false, false, false],
    );
    expect(leftOutNote(mapping, r)).toBe(
      'business_email left out (column "column 1" holds a JSON object or array, not text); sent without it',
    );
    expect(
      leftOutNote(mapping, jsonRow(['x', 'Jane', 'Doe', '[1]'], [false, false, false, true])),
    ).toBe(
      'company_name left out (column "column 4" holds a JSON object or array, not text); sent without it; business_email left out (not an email address: it has no @); sent without it',
    );
  });

  it('a row shorter than its header has no value in the missing cells', () => {
    const short = { index: 0, line: 2, cells: ['jane@acme.com'] };
    expect(validateRow('contacts', mapping, short, { header })).toEqual({
      ok: true,
      fields: { business_email: 'jane@acme.com' },
      key: expect.any(String),
    });
  });
});

describe('sites that are no site (regression: "n/a" as a company domain, "not a url" as a profile were sent and paid for)', () => {
  const contacts = {
    fields: {
      company_domain: 0,
      prof_network_url: 1,
      first_name: 2,
      last_name: 3,
      company_name: 4,
    },
  };
  const head = ['Domain', 'Profile', 'First', 'Last', 'Company'];
  const v = (...cells: string[]) =>
    validateRow('contacts', contacts, { index: 0, line: 2, cells }, { header: head });

  it('a row whose only way in is such a value is invalid, naming the field, the column and why', () => {
    expect(v('n/a', '', 'Jane', 'Doe', '')).toEqual({
      ok: false,
      error: 'company_domain: not a domain name (it is not a host name such as acme.com)',
      column: 'Domain',
    });
    expect(v('acme .com', '', 'Jane', 'Doe', '')).toMatchObject({
      error: 'company_domain: not a domain name (it contains a space)',
    });
    expect(v('jane@acme.com', '', 'Jane', 'Doe', '')).toMatchObject({
      error: 'company_domain: not a domain name (it is an email address)',
    });
    expect(v('', 'not a url', '', '', '')).toEqual({
      ok: false,
      error: 'prof_network_url: not a profile URL (it contains a space)',
      column: 'Profile',
    });
    expect(v('', 'N/A', '', '', '')).toMatchObject({
      error:
        'prof_network_url: not a profile URL (it is not a web address such as acme.com or https://acme.com/about)',
    });
  });

  it('a row with another complete combination goes without it, keyed as without it, and the note says so', () => {
    const row = { index: 0, line: 2, cells: ['n/a', 'none', 'Jane', 'Doe', 'Acme'] };
    const sent = validateRow('contacts', contacts, row, { header: head });
    expect(sent).toMatchObject({
      ok: true,
      fields: { first_name: 'Jane', last_name: 'Doe', company_name: 'Acme' },
    });
    expect(sent.ok && Object.keys(sent.fields).sort()).toEqual([
      'company_name',
      'first_name',
      'last_name',
    ]);
    expect(sent.ok && sent.key).toBe((v('', '', 'Jane', 'Doe', 'Acme') as { key: string }).key);
    expect(leftOutNote(contacts, row, head)).toBe(
      'company_domain left out (not a domain name: it is not a host name such as acme.com); sent without it; prof_network_url left out (not a profile URL: it is not a web address such as acme.com or https://acme.com/about); sent without it',
    );
  });

  it('takes what sites are: URLs reduced to their host, paths, IDN, www, @ in a path', () => {
    for (const [domain, sentAs] of [
      ['https://www.Acme.com/about', 'acme.com'],
      ['exämple.de', 'xn--exmple-cua.de'],
      ['sub.acme.co.uk', 'sub.acme.co.uk'],
    ])
      expect(v(domain!, '', 'Jane', 'Doe', '')).toMatchObject({
        ok: true,
        fields: { company_domain: sentAs },
      });
    for (const url of [
      'https://www.prof.example/in/jane-doe-123',
      'prof.example/in/jane',
      'http://medium.com/@jane',
      'https://prof.example/in/j%C3%A9r%C3%B4me?trk=x',
    ])
      expect(v('', url, '', '', '')).toMatchObject({ ok: true, fields: { prof_network_url: url } });
    const site = (w: string) =>
      validateRow(
        'companies',
        { fields: { company_website: 0 } },
        { index: 0, line: 2, cells: [w] },
      );
    expect(site('https://acme.com/about')).toMatchObject({
      ok: true,
      fields: { company_website: 'https://acme.com/about' },
    });
    expect(site('TBD')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^company_website: not a website/),
    });
  });
});
