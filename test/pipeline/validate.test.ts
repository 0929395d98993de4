import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import type { ColumnMapping } from '../../src/pipeline/mapping/map-columns.js';
import {
  nfc,
  normalizeByUrl,
  normalizeDomain,
  normalizeWebsite,
  splitFullName,
} from '../../src/pipeline/mapping/normalize.js';
import { keyOfFields, validateRow } from '../../src/pipeline/mapping/validate.js';

const row = (cells: string[], error?: string): InputRow => ({
  index: 0,
  line: 2,
  cells,
  ...(error ? { error } : {}),
});
const contacts: ColumnMapping = {
  fields: {
    business_email: 0,
    first_name: 1,
    last_name: 2,
    company_domain: 3,
    company_name: 4,
    prof_network_url: 5,
  },
};
const header = ['Email', 'First', 'Last', 'Website', 'Company', 'Profile', 'Id'];

describe('validateRow: contacts', () => {
  it('trims, reduces the website to a domain, drops empty values', () => {
    const v = validateRow(
      'contacts',
      contacts,
      row([
        '  Jane@Acme.com ',
        ' Jane ',
        ' van  der Berg',
        'https://www.Acme.com/about?x=1',
        '',
        '',
      ]),
    );
    expect(v).toEqual({
      ok: true,
      fields: {
        business_email: 'Jane@Acme.com',
        first_name: 'Jane',
        last_name: 'van der Berg',
        company_domain: 'acme.com',
      },
      key: expect.any(String),
    });
  });

  it.each([
    [
      ['', 'Jane', 'Doe', '', '', ''],
      'needs at least one of: prof_network_url; business_email; first_name + last_name + company_domain; first_name + last_name + company_name',
    ],
    [['', 'Jane', '', 'acme.com', 'Acme', ''], 'needs at least one of'],
    [['   ', '', '', '', '', ''], 'needs at least one of'],
  ])('refuses %j: names the rule', (cells, message) => {
    const v = validateRow('contacts', contacts, row(cells));
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.error).toContain(message);
  });

  it('accepts each of the API combinations', () => {
    expect(
      validateRow('contacts', contacts, row(['', '', '', '', '', 'https://pn.example/in/x'])).ok,
    ).toBe(true);
    expect(validateRow('contacts', contacts, row(['', 'Jane', 'Doe', 'acme.com', '', ''])).ok).toBe(
      true,
    );
    expect(validateRow('contacts', contacts, row(['', 'Jane', 'Doe', '', 'Acme', ''])).ok).toBe(
      true,
    );
  });

  it('enforces the 255-character limit and names field and column', () => {
    const v = validateRow(
      'contacts',
      contacts,
      row(['a@b.co', 'x'.repeat(256), 'Doe', '', '', '']),
      { header },
    );
    expect(v).toEqual({
      ok: false,
      error: 'first_name: longer than 255 characters (got 256)',
      column: 'First',
    });
  });

  it('counts characters as code points, as the schemas and the service do (session 25: UTF-16 units)', () => {
    // 200 emoji are 400 UTF-16 units: within the limit, and sent.
    const within = validateRow(
      'contacts',
      contacts,
      row(['', '😀'.repeat(200), 'Doe', '', 'Acme', '']),
    );
    expect(within).toMatchObject({ ok: true, fields: { first_name: '😀'.repeat(200) } });
    const over = validateRow(
      'contacts',
      contacts,
      row(['', '𠮷'.repeat(256), 'Doe', '', 'Acme', '']),
      {
        header,
      },
    );
    expect(over).toEqual({
      ok: false,
      error: 'first_name: longer than 255 characters (got 256)',
      column: 'First',
    });
  });

  it('a ragged row is invalid with the reader message', () => {
    expect(validateRow('contacts', contacts, row(['a@b.co'], 'expected 7 cells, got 1'))).toEqual({
      ok: false,
      error: 'expected 7 cells, got 1',
    });
  });

  it('splits a full-name column', () => {
    const v = validateRow(
      'contacts',
      { fields: { company_name: 1 }, split: { column: 0 } },
      row(['Dr. Jane Doe', 'Acme']),
    );
    expect(v.ok && v.fields).toEqual({
      company_name: 'Acme',
      first_name: 'Jane',
      last_name: 'Doe',
    });
  });

  it('a name too long from a full-name column names that column, for the first and the last name', () => {
    const split: ColumnMapping = { fields: { company_name: 1 }, split: { column: 0 } };
    const h = ['Full Name', 'Company'];
    const long = 'x'.repeat(256);
    expect(validateRow('contacts', split, row([`${long} Doe`, 'Acme']), { header: h })).toEqual({
      ok: false,
      error: 'first_name: longer than 255 characters (got 256)',
      column: 'Full Name',
    });
    expect(validateRow('contacts', split, row([`Jane ${long}`, 'Acme']), { header: h })).toEqual({
      ok: false,
      error: 'last_name: longer than 255 characters (got 256)',
      column: 'Full Name',
    });
    // Any other field keeps its own column.
    expect(validateRow('contacts', split, row(['Jane Doe', long]), { header: h })).toEqual({
      ok: false,
      error: 'company_name: longer than 255 characters (got 256)',
      column: 'Company',
    });
  });
});

describe('validateRow: companies', () => {
  const m: ColumnMapping = { fields: { company_name: 0, company_website: 1 } };
  it('keeps a website path that matters, reduces a bare URL', () => {
    expect(validateRow('companies', m, row(['', 'https://sites.example.com/acme']))).toMatchObject({
      ok: true,
      fields: { company_website: 'https://sites.example.com/acme' },
    });
    expect(validateRow('companies', m, row(['Acme', 'HTTPS://WWW.ACME.COM/']))).toMatchObject({
      ok: true,
      fields: { company_name: 'Acme', company_website: 'acme.com' },
    });
  });
  it('needs a name or a website; names are at most 255 characters', () => {
    expect(validateRow('companies', m, row(['  ', '']))).toEqual({
      ok: false,
      error: 'needs at least one of: company_website; company_name',
    });
    expect(validateRow('companies', m, row(['x'.repeat(300), '']))).toMatchObject({
      ok: false,
      error: 'company_name: longer than 255 characters (got 300)',
    });
  });
});

describe('dedupe keys', () => {
  it('identical normalised inputs share a key: case, www, scheme and trailing slash ignored', () => {
    const a = validateRow(
      'contacts',
      contacts,
      row(['JANE@ACME.COM', 'Jane', 'Doe', 'https://www.acme.com/', '', '']),
    );
    const b = validateRow(
      'contacts',
      contacts,
      row(['jane@acme.com ', 'jane', 'doe', 'acme.com', '', '']),
    );
    const c = validateRow(
      'contacts',
      contacts,
      row(['jane@acme.com', 'Jane', 'Doe', 'acme.org', '', '']),
    );
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (a.ok && b.ok && c.ok) {
      expect(a.key).toBe(b.key);
      expect(a.key).not.toBe(c.key);
      expect(keyOfFields('contacts', { ...a.fields, custom_fields: { enrich_row: 1 } })).toBe(
        a.key,
      );
    }
  });
  it('a name in NFC and in NFD (Windows and Mac exports) is one request and one key; the cells stay as read', () => {
    // Regression: two requests, each charged, and neither one a cache hit for the other.
    const cells = ['jose@telefonica.es', 'José', 'Núñez', 'telefónica.es', 'Telefónica España', ''];
    const composed = row(cells.map((c) => c.normalize('NFC')));
    const decomposed = row(cells.map((c) => c.normalize('NFD')));
    const a = validateRow('contacts', contacts, composed);
    const b = validateRow('contacts', contacts, decomposed);
    if (!a.ok || !b.ok) throw new Error('expected valid rows');
    expect(b.key).toBe(a.key);
    expect(b.fields).toEqual(a.fields);
    expect(b.fields.company_name).toBe('Telef\u00f3nica Espa\u00f1a');
    expect(decomposed.cells[2]).toBe('Nu\u0301n\u0303ez');
    // A full-name column too, and the echo of an NFD request an earlier version sent.
    const split = { fields: { business_email: 0 }, split: { column: 1 } };
    const s1 = validateRow('contacts', split, row(['x@acme.com', 'José Núñez'.normalize('NFD')]));
    expect(s1.ok && s1.fields).toMatchObject({
      first_name: 'Jos\u00e9',
      last_name: 'N\u00fa\u00f1ez',
    });
    expect(
      keyOfFields('contacts', { first_name: 'José'.normalize('NFD'), company_name: 'Acme' }),
    ).toBe(keyOfFields('contacts', { first_name: 'Jos\u00e9', company_name: 'Acme' }));
  });
  it('nfc is String.prototype.normalize("NFC"), skipping the values that are NFC already', () => {
    const text = fc.string({
      unit: fc.constantFrom(
        'a',
        'e',
        'A',
        ' ',
        '\u00e9',
        '\u0301',
        '\u0303',
        '\u0327',
        '\u1100',
        '\u1161',
        '\u212b',
        '\u00c5',
        '\u0041\u030a',
        '\ud83d\ude00',
        '\u3099',
        '\u304b',
        '\u02ff',
        '\u0300',
        '\u0438', // и, and the breve that makes it й
        '\u0306',
        '\u0439',
        '\u0483',
        '\u30ab',
        '\u738b',
        '\uac00',
        '\u11a8', // a trailing jamo: 가 + ᆨ is 각
        '\uf900', // a CJK compatibility ideograph (a singleton)
        '\u1f71',
      ),
    });
    fc.assert(
      fc.property(text, (v) => nfc(v) === v.normalize('NFC')),
      { numRuns: 2000 },
    );
    // Every character of the BMP, alone and after a letter it might combine with.
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCharCode(cp);
      for (const v of [c, `a${c}`, `\u0438${c}`, `\u304b${c}`, `\u1100${c}`, `\uac00${c}`])
        if (nfc(v) !== v.normalize('NFC')) expect(nfc(v)).toBe(v.normalize('NFC'));
    }
    expect(nfc('Soci\u00e9t\u00e9')).toBe('Soci\u00e9t\u00e9');
    expect(nfc('\u212b')).toBe('\u00c5'); // the angstrom sign, a singleton past U+0300
  });
  it('contacts and companies never share a key', () => {
    expect(keyOfFields('contacts', { company_name: 'Acme' })).not.toBe(
      keyOfFields('companies', { company_name: 'Acme' }),
    );
  });
});

describe('normalize', () => {
  it.each([
    ['https://www.acme.com/about', 'acme.com'],
    ['WWW.Acme.COM', 'acme.com'],
    ['acme.co.uk:443/x', 'acme.co.uk'],
    ['not a domain', 'not a domain'],
    ['jane@acme.com', 'jane@acme.com'],
  ])('normalizeDomain(%j) = %j', (input, out) => expect(normalizeDomain(input)).toBe(out));

  it.each([
    ['https://acme.com/?utm_source=x', 'acme.com'],
    ['acme.com/careers', 'acme.com/careers'],
    ['ftp://acme.com', 'ftp://acme.com'],
  ])('normalizeWebsite(%j) = %j', (input, out) => expect(normalizeWebsite(input)).toBe(out));

  it("a simple site's host is the URL parser's (the shortcut past the URL parse changes nothing)", () => {
    const scheme = fc.constantFrom('', 'http://', 'https://', 'HTTPS://', 'ftp://', 'http:/');
    const www = fc.constantFrom('', 'www.', 'WWW.', 'www2.', 'www');
    const label = fc.stringMatching(/^[A-Za-z0-9-]{1,8}$/);
    const tld = fc.constantFrom(
      'com',
      'CO',
      'io',
      'x1',
      '1',
      '0x7f',
      'xn--p1ai',
      'xn--zz',
      'de-',
      '',
    );
    const tail = fc.constantFrom('', '/', '//', '/about', '?', '?utm_source=x', ':8080', '.', ' ');
    const site = fc
      .tuple(scheme, www, fc.array(label, { minLength: 1, maxLength: 3 }), tld, tail)
      .map(([s, w, labels, t, rest]) => `${s}${w}${labels.join('.')}.${t}${rest}`);
    fc.assert(
      fc.property(site, (value) => {
        expect(normalizeDomain(value)).toBe(normalizeByUrl.domain(value));
        expect(normalizeWebsite(value)).toBe(normalizeByUrl.website(value));
      }),
      { numRuns: 3000 },
    );
    // A bare host ending in a number is an IPv4 address to the URL parser, with or without a scheme.
    for (const ip of ['0.0x7f', '10.1', 'a.1']) {
      expect(normalizeDomain(ip)).toBe(normalizeByUrl.domain(ip));
      expect(normalizeWebsite(ip)).toBe(normalizeByUrl.website(ip));
    }
    expect(normalizeDomain('0.0x7f')).toBe('0.0.0.127');
    expect(normalizeDomain('10.1')).toBe(normalizeDomain('https://10.1/'));
    expect(normalizeDomain('https://www.Acme.com/')).toBe('acme.com');
    expect(normalizeWebsite('HTTP://WWW2.acme.io')).toBe('acme.io');
    expect(normalizeDomain('https://www.com')).toBe('https://www.com'); // no host left after www.
    expect(normalizeDomain('http://0x7f.1')).toBe('127.0.0.1'); // an IPv4 name: the URL parser's
  });

  it.each([
    ['Jane Doe', 'Jane', 'Doe'],
    ['  Jane   van der Berg ', 'Jane', 'van der Berg'],
    ['Doe, Jane', 'Jane', 'Doe'],
    ['Jane Doe, PhD', 'Jane', 'Doe'],
    ['Mr. John Smith Jr.', 'John', 'Smith'],
    ['Cher', 'Cher', ''],
    ['', '', ''],
  ])('splitFullName(%j) = %j %j', (input, first, last) =>
    expect(splitFullName(input)).toEqual({ first, last }),
  );
});
