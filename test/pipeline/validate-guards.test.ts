import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import type { ColumnMapping } from '../../src/pipeline/mapping/map-columns.js';
import { emailNote, keyOfFields, validateRow } from '../../src/pipeline/mapping/validate.js';

// What validation and the dedupe key must get right (issue 21: mutants of validate.ts that no
// test saw). Two keys for one lookup pay twice; one key for two lookups loses a row.

const row = (cells: string[], error?: string): InputRow => ({
  index: 0,
  line: 2,
  cells,
  ...(error ? { error } : {}),
});
const profile = (url: string) => keyOfFields('contacts', { prof_network_url: url });

describe('dedupe keys of URLs', () => {
  it.each([
    ['https://www.linkedin.com/in/jane/', 'linkedin.com/in/jane'],
    ['HTTP://LinkedIn.com/in/Jane', 'linkedin.com/in/jane'],
    ['www2.linkedin.com/in/jane//', 'linkedin.com/in/jane'],
  ])('a profile URL %s is the same lookup as %s (paid once)', (a, b) => {
    expect(profile(a)).toBe(profile(b));
  });

  it.each([
    ['linkedin.com/in/www.jane', 'linkedin.com/in/jane'],
    ['linkedin.com/in/jane/http://x', 'linkedin.com/in/jane/x'],
    ['linkedin.com/in/jane/x', 'linkedin.com/in/jane'],
    ['linkedin.com/in/jane', 'linkedin.com/in/jan'],
  ])('a profile URL %s is another lookup than %s (never merged)', (a, b) => {
    expect(profile(a)).not.toBe(profile(b));
  });

  it.each([
    ['companies', 'company_website'],
    ['contacts', 'company_domain'],
  ] as const)(
    '%s: the %s keys ignore scheme, www. and trailing slash, never a www. inside',
    (kind, field) => {
      const key = (v: string) => keyOfFields(kind, { [field]: v });
      expect(key('https://www.acme.com/')).toBe(key('acme.com'));
      expect(key('acme.com/www.x')).not.toBe(key('acme.com/x'));
    },
  );

  it('names are not URLs: a www., a scheme or a trailing slash in a name is kept', () => {
    const key = (f: Record<string, string>) => keyOfFields('contacts', f);
    expect(key({ first_name: 'www.Jane', last_name: 'Doe' })).not.toBe(
      key({ first_name: 'Jane', last_name: 'Doe' }),
    );
    expect(keyOfFields('companies', { company_name: 'http://acme/' })).not.toBe(
      keyOfFields('companies', { company_name: 'acme' }),
    );
  });

  it('keys name each field, fold case and inner blanks, and skip blanks and non-strings', () => {
    expect(keyOfFields('contacts', { first_name: 'Jane', last_name: 'Doe' })).toBe(
      'contacts\u0001first_name=jane\u0001last_name=doe',
    );
    expect(keyOfFields('contacts', { first_name: ' Jane  Ann ', last_name: 7 })).toBe(
      'contacts\u0001first_name=jane ann',
    );
    expect(keyOfFields('contacts', { first_name: '   ' })).toBe('contacts');
  });
});

describe('validateRow', () => {
  it('a one-word full name sends no last_name at all (an empty one gets the whole batch refused)', () => {
    const v = validateRow(
      'contacts',
      { fields: { company_name: 1 }, split: { column: 0 } },
      row(['Cher', 'Acme']),
    );
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.error).toMatch(/last_name|combination|needs/);
    const withEmail = validateRow(
      'contacts',
      { fields: { business_email: 1 }, split: { column: 0 } },
      row(['Cher', 'cher@acme.com']),
    );
    expect(withEmail.ok && withEmail.fields).toEqual({
      business_email: 'cher@acme.com',
      first_name: 'Cher',
    });
    const blank = validateRow(
      'contacts',
      { fields: { business_email: 1 }, split: { column: 0 } },
      row(['  ', 'cher@acme.com']),
    );
    expect(blank.ok && blank.fields).toEqual({ business_email: 'cher@acme.com' });
  });

  it('a too-long value names its column, by header or by number', () => {
    const m: ColumnMapping = { fields: { business_email: 1, first_name: 0, last_name: 2 } };
    const cells = ['x'.repeat(256), 'a@b.co', 'Doe'];
    expect(validateRow('contacts', m, row(cells))).toEqual({
      ok: false,
      error: 'first_name: longer than 255 characters (got 256)',
      column: 'column 1',
    });
    expect(validateRow('contacts', m, row(cells), { header: ['First', 'E', 'L'] })).toMatchObject({
      column: 'First',
    });
    // Exactly 255 is allowed.
    const ok = validateRow('contacts', m, row(['x'.repeat(255), 'a@b.co', 'Doe']));
    expect(ok.ok).toBe(true);
  });

  it('a split full name too long names the full-name column', () => {
    const v = validateRow(
      'contacts',
      { fields: { business_email: 1 }, split: { column: 0 } },
      row([`Jane ${'y'.repeat(256)}`, 'a@b.co']),
      { header: ['Name', 'Email'] },
    );
    expect(v).toEqual({
      ok: false,
      error: 'last_name: longer than 255 characters (got 256)',
      column: 'Name',
    });
  });

  it('a company website over 255 characters is sent (only company_name has the limit)', () => {
    const v = validateRow(
      'companies',
      { fields: { company_website: 0 } },
      row([`https://acme.com/${'p'.repeat(300)}`]),
    );
    expect(v.ok).toBe(true);
  });

  it('a bad email alone makes the row invalid, naming the email column (by header or number)', () => {
    const m: ColumnMapping = { fields: { business_email: 0, company_name: 1 } };
    expect(validateRow('contacts', m, row(['jane doe@acme.com', 'Acme']))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^business_email: not an email address \(/) as string,
      column: 'column 1',
    });
    expect(
      validateRow('contacts', m, row(['bad@', 'Acme']), { header: ['Mail', 'Co'] }),
    ).toMatchObject({ ok: false, column: 'Mail' });
  });

  it('a bad email beside a complete name + company is left out, and the row is sent', () => {
    const m: ColumnMapping = {
      fields: { business_email: 0, first_name: 1, last_name: 2, company_name: 3 },
    };
    const cells = ['bad@', 'Jane', 'Doe', 'Acme'];
    const v = validateRow('contacts', m, row(cells));
    expect(v.ok && v.fields).toEqual({
      first_name: 'Jane',
      last_name: 'Doe',
      company_name: 'Acme',
    });
    expect(emailNote(m, row(cells))).toMatch(/^business_email left out \(not an email address: /);
    expect(emailNote(m, row(['jane@acme.com', 'Jane', 'Doe', 'Acme']))).toBeUndefined();
    expect(emailNote(m, row(['  ', 'Jane', 'Doe', 'Acme']))).toBeUndefined();
    expect(emailNote({ fields: { first_name: 0 } }, row(['Jane']))).toBeUndefined();
  });
});

describe('validateRow: rows shorter than the mapping', () => {
  it('a mapped column the row lacks is empty, for fields, a full name and the email note', () => {
    const m: ColumnMapping = {
      fields: { business_email: 0, prof_network_url: 3 },
      split: { column: 4 },
    };
    const v = validateRow('contacts', m, row(['jane@acme.com']));
    expect(v.ok && v.fields).toEqual({ business_email: 'jane@acme.com' });
    expect(
      emailNote({ fields: { business_email: 3, first_name: 0 } }, row(['Jane'])),
    ).toBeUndefined();
  });

  it('a profile URL is sent trimmed, as written', () => {
    const v = validateRow(
      'contacts',
      { fields: { prof_network_url: 0 } },
      row(['  https://www.linkedin.com/in/Jane/  ']),
    );
    expect(v.ok && v.fields).toEqual({ prof_network_url: 'https://www.linkedin.com/in/Jane/' });
  });
});
