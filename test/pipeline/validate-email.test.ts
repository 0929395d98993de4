import { describe, expect, it } from 'vitest';
import { emailNote, validateRow } from '../../src/pipeline/mapping/validate.js';

const mapping = { fields: { business_email: 0, first_name: 1, last_name: 2, company_name: 3 } };
const header = ['Email', 'First', 'Last', 'Company'];
const check = (...cells: string[]) =>
  validateRow('contacts', mapping, { index: 0, line: 2, cells }, { header });

describe('the email rule in bulk validation (regression: "jane doe@acme.com", "foo", "bad@" were sent and paid for)', () => {
  it('refuses a row whose only way in is a bad address, naming the column and the reason', () => {
    for (const email of ['jane doe@acme.com', 'jane@acme .com', 'jane\t@acme.com'])
      expect(check(email, '', '', '')).toEqual({
        ok: false,
        error: 'business_email: not an email address (it contains a space)',
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
