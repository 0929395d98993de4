import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emailProblem, emailProblemByRule, isEmailAddress } from '../../src/contract/email.js';
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
    ['tab\there@x.com', /a tab/],
    ['line\nbreak@x.com', /a line break/],
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

  it('a plain address passes the full rule: the shortcut never says yes where the rule says no', () => {
    // Strings near addresses: ASCII and other scripts, dots, hyphens, quotes, spaces, several @.
    const char = fc.constantFrom(...'aZ09.-_+@@@@"\\ (é東\u0000:[]`~'.split(''));
    const nearAddress = fc.array(char, { maxLength: 24 }).map((cs) => cs.join(''));
    const plainLocal = fc.stringMatching(
      /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,10}(\.[A-Za-z0-9_-]{1,5})?$/,
    );
    const label = fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9-]{0,6}[A-Za-z0-9])?$/);
    const plain = fc
      .tuple(plainLocal, fc.array(label, { minLength: 2, maxLength: 4 }))
      .map(([local, labels]) => `${local}@${labels.join('.')}`);
    fc.assert(
      fc.property(fc.oneof(nearAddress, plain), (email) => {
        expect(emailProblem(email)).toBe(emailProblemByRule(email));
      }),
      { numRuns: 2000 },
    );
    // Past the length limit, the rule's own answer (the shortcut is only for short addresses).
    const long = `${'a'.repeat(250)}@x.com`;
    expect(emailProblem(long)).toBe(emailProblemByRule(long));
    expect(emailProblem(long)).toMatch(/longer than 254/);
  });
});
