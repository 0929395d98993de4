import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emailProblem, isEmailAddress } from '../../src/contract/email.js';
import { emailVerificationRequestSchema } from '../../src/contract/requests.js';

describe('the one email rule', () => {
  it.each([
    'jane.doe@acme.com',
    'jane.doe+news@acme.co.uk',
    'a!b@example.com',
    "o'brien@example.ie",
    'josé@exämple.de',
    '用户@例子.广告',
    '"john doe"@example.com',
    '"a@b"@example.com',
    '"quote\\"inside"@example.com',
    'x@[192.0.2.1]',
    'first-last@sub-domain.example.org',
  ])('takes %s', (email) => {
    expect(emailProblem(email)).toBeUndefined();
    expect(emailVerificationRequestSchema.safeParse({ email }).success).toBe(true);
  });

  it.each([
    ['foo', /no @/],
    ['bad@', /nothing after the @/],
    ['@x.com', /nothing before the @/],
    ['mailto:a@b.com', /mailto/],
    ['a b@c.com', /space/],
    ['bad@@x.com', /more than one @/],
    ['a@b@c.com', /more than one @/],
    ['user@localhost', /no dot/],
    ['jane.@acme.com', /local part/],
    ['.jane@acme.com', /local part/],
    ['ja..ne@acme.com', /local part/],
    ['jane@acme..com', /host name/],
    ['jane@-acme.com', /host name/],
    ['jane@acme.com.', /host name/],
    ['tab\there@x.com', /space/],
    ['nul\u0000@x.com', /control/],
    ['"open@x.com', /not closed/],
    ['(comment)jane@x.com', /local part/],
    ['', /empty/],
    [`${'a'.repeat(250)}@x.com`, /longer than 254/],
  ])('refuses %j (%s)', (email, why) => {
    expect(emailProblem(email)).toMatch(why);
    expect(emailVerificationRequestSchema.safeParse({ email }).success).toBe(false);
  });

  it('takes every simple address and refuses it with a space, a second @ or no domain dot', () => {
    const atom = fc.stringMatching(/^[a-z0-9!#$%&'*+/=?^_`{|}~-]{1,12}$/);
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
    fc.assert(
      fc.property(atom, label, label, (local, host, tld) => {
        const email = `${local}@${host}.${tld}`;
        expect(isEmailAddress(email)).toBe(true);
        expect(isEmailAddress(`${local} x@${host}.${tld}`)).toBe(false);
        expect(isEmailAddress(`${local}@@${host}.${tld}`)).toBe(false);
        expect(isEmailAddress(`${local}@${host}`)).toBe(false);
      }),
    );
  });
});
