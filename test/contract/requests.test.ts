import { describe, expect, it } from 'vitest';
import {
  bulkCompaniesRequestSchema,
  bulkContactsRequestSchema,
  companyRequestSchema,
  contactRequestSchema,
  emailVerificationRequestSchema,
} from '../../src/contract/index.js';

const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  r.error?.issues.map((i) => i.path.join('.')) ?? [];

describe('contact request rules', () => {
  it.each([
    [{ prof_network_url: 'https://pn.example/in/jane' }],
    [{ business_email: 'jane@acme.com' }],
    [{ first_name: 'Jane', last_name: 'Doe', company_domain: 'acme.com' }],
    [{ first_name: 'Jane', last_name: 'Doe', company_name: 'Acme' }],
  ])('accepts the combination %j', (body) => {
    expect(contactRequestSchema.safeParse(body).success).toBe(true);
  });

  it.each([
    [{}],
    [{ first_name: 'Jane', last_name: 'Doe' }],
    [{ first_name: 'Jane', company_domain: 'acme.com' }],
    [{ business_email: '   ' }],
  ])('refuses %j for lacking a combination', (body) => {
    const r = contactRequestSchema.safeParse(body);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/at least one of/);
  });

  it('enforces lengths: 255 max, names at least 1', () => {
    const long = 'x'.repeat(256);
    expect(paths(contactRequestSchema.safeParse({ business_email: long }))).toContain(
      'business_email',
    );
    expect(
      paths(contactRequestSchema.safeParse({ business_email: 'a@b.co', first_name: '' })),
    ).toContain('first_name');
    expect(contactRequestSchema.safeParse({ business_email: 'x'.repeat(255) }).success).toBe(true);
  });

  it('allows mobile_phone_exists only with mobile_phone_enrichment = true', () => {
    const base = { business_email: 'a@b.co' };
    expect(
      paths(contactRequestSchema.safeParse({ ...base, metadata: { mobile_phone_exists: true } })),
    ).toContain('metadata.mobile_phone_exists');
    expect(
      contactRequestSchema.safeParse({
        ...base,
        metadata: { mobile_phone_exists: true, mobile_phone_enrichment: true },
      }).success,
    ).toBe(true);
  });

  it('is strict about unknown fields', () => {
    expect(contactRequestSchema.safeParse({ business_email: 'a@b.co', nope: 1 }).success).toBe(
      false,
    );
  });

  it('names the element of a bulk request that fails', () => {
    const r = bulkContactsRequestSchema.safeParse({
      contacts: [
        { business_email: 'a@b.co', custom_fields: {} },
        { first_name: 'x', custom_fields: {} },
        { business_email: 'c@d.co' },
      ],
    });
    expect(paths(r)).toEqual(expect.arrayContaining(['contacts.1', 'contacts.2.custom_fields']));
  });
});

describe('company request rules', () => {
  it('defaults top_matches_returned to 1 and bounds it to 1..10', () => {
    const ok = companyRequestSchema.safeParse({ company_name: 'Acme', metadata: {} });
    expect(ok.data?.metadata?.top_matches_returned).toBe(1);
    for (const bad of [0, 11, 2.5]) {
      expect(
        companyRequestSchema.safeParse({
          company_name: 'Acme',
          metadata: { top_matches_returned: bad },
        }).success,
      ).toBe(false);
    }
  });

  it('needs a name or a website', () => {
    expect(companyRequestSchema.safeParse({}).success).toBe(false);
    expect(companyRequestSchema.safeParse({ company_website: 'acme.com' }).success).toBe(true);
    expect(
      bulkCompaniesRequestSchema.safeParse({ companies: [{ company_name: '', custom_fields: {} }] })
        .success,
    ).toBe(false);
  });
});

describe('email verification request', () => {
  it('requires a valid email', () => {
    expect(emailVerificationRequestSchema.safeParse({ email: 'jane@acme.com' }).success).toBe(true);
    expect(emailVerificationRequestSchema.safeParse({ email: 'jane at acme' }).success).toBe(false);
    expect(emailVerificationRequestSchema.safeParse({}).success).toBe(false);
  });
});
