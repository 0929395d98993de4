import { describe, expect, it } from 'vitest';
import { validateRow } from '../../src/pipeline/mapping/validate.js';

const mapping = { fields: { business_email: 0, first_name: 1, last_name: 2, company_name: 3 } };
const header = ['Email', 'First', 'Last', 'Company'];
const check = (...cells: string[]) =>
  validateRow('contacts', mapping, { index: 0, line: 2, cells }, { header });

describe('email-looking values (regression: "jane doe@acme.com" was sent and a credit spent)', () => {
  it('refuses an address with a space or two @, naming the column', () => {
    for (const email of ['jane doe@acme.com', 'jane@acme .com', 'jane\t@acme.com'])
      expect(check(email, '', '', '')).toEqual({
        ok: false,
        error: 'business_email: not an email address (it contains a space)',
        column: 'Email',
      });
    expect(check('jane@@acme.com', '', '', '')).toMatchObject({
      ok: false,
      error: 'business_email: not an email address (it contains more than one @)',
    });
  });

  it('even when the name and company alone would be enough: the bad address would be sent too', () => {
    expect(check('jane doe@acme.com', 'Jane', 'Doe', 'Acme').ok).toBe(false);
  });

  it('keeps addresses with spaces only around them (trimmed), and quoted local parts stay the service’s business', () => {
    expect(check(' jane@acme.com ', '', '', '')).toMatchObject({
      ok: true,
      fields: { business_email: 'jane@acme.com' },
    });
    expect(check('jane+tag@acme.com', '', '', '').ok).toBe(true);
  });
});
