import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  contactRecordSchema,
  companyRecordSchema,
  type CompanyRecord,
} from '../../src/contract/index.js';
import {
  generateCompanies,
  generateContacts,
  lookupContact,
  companyProfile,
  verifyEmailStatus,
  INSUFFICIENT_CREDITS,
} from '../../src/sandbox/index.js';

const input = fc.record(
  {
    business_email: fc.emailAddress(),
    company_domain: fc.domain(),
    company_name: fc.string({ minLength: 1, maxLength: 30 }),
    first_name: fc.string({ minLength: 1, maxLength: 20 }),
    last_name: fc.string({ minLength: 1, maxLength: 20 }),
  },
  { requiredKeys: [] },
);

describe('synthetic contacts', () => {
  it('are deterministic: the same input and seed give the same record (property)', () => {
    fc.assert(
      fc.property(input, fc.integer({ min: 0, max: 1000 }), (i, seed) => {
        expect(lookupContact(i, { seed })).toEqual(lookupContact({ ...i }, { seed }));
      }),
      { numRuns: 200 },
    );
  });

  it('always have every field of the contract with its type (property)', () => {
    fc.assert(
      fc.property(input, fc.boolean(), (i, mobile) => {
        const r = lookupContact(i, { seed: 1, mobile });
        contactRecordSchema.parse(r);
        for (const v of [r.error, r.first_name, r.email, r.office_phone, r.mobile_phone, r.title])
          expect(typeof v).toBe('string');
        if (!mobile) expect(r.mobile_phone).toBe('');
      }),
      { numRuns: 200 },
    );
  });

  it('depend on the seed', () => {
    const i = { business_email: 'pat@contoso.com' };
    expect(lookupContact(i, { seed: 1 })).not.toEqual(lookupContact(i, { seed: 2 }));
  });

  it('normalise inputs: case and website form do not change the person', () => {
    const a = lookupContact(
      { first_name: 'Jo', last_name: 'Ray', company_domain: 'https://www.Acme.com/x' },
      { seed: 1 },
    );
    const b = lookupContact(
      { first_name: 'jo', last_name: 'ray', company_domain: 'acme.com' },
      { seed: 1 },
    );
    expect(a.title).toBe(b.title);
    expect(a.company).toEqual(b.company);
  });

  it('plausible values: international phones, known job levels, a title', () => {
    const r = lookupContact({ business_email: 'kim.lo@initech.com' }, { seed: 3, mobile: true });
    expect(r.office_phone).toMatch(/^\+\d{1,2} \d+ \d+ \d{4}$/);
    expect(r.mobile_phone).toMatch(/^\+\d{1,2} \d+ \d+ \d{4}$/);
    expect(['C-Level', 'VP', 'Director', 'Manager', 'Staff']).toContain(r.job_level);
    expect(r.title).toMatch(/^\w+( \w+)+$/);
    expect([r.first_name, r.last_name]).toEqual(['Kim', 'Lo']);
  });

  it('magic inputs: nomatch, noemail with business_email_exists, nomobile with mobile_phone_exists', () => {
    expect(lookupContact({ business_email: 'NoMatch@x.com' }, { seed: 1 })).toMatchObject({
      error: 'No match found',
      credit_charged: false,
      email: '',
      location: { country: '' },
    });
    expect(lookupContact({ business_email: 'noemail@x.com' }, { seed: 1 }).email).toBe('');
    expect(
      lookupContact({ business_email: 'noemail@x.com' }, { seed: 1, requireEmail: true })
        .credit_charged,
    ).toBe(false);
    const m = { first_name: 'A', last_name: 'Nomobile', company_name: 'X' };
    expect(lookupContact(m, { seed: 1, mobile: true }).mobile_phone).toBe('');
    expect(lookupContact(m, { seed: 1, mobile: true, requireMobile: true }).error).toMatch(
      /mobile/,
    );
  });

  it('bulk: echoes custom_fields (same object) and original_fields, charges until credits run out', () => {
    const custom = { id: 1 };
    const inputs = [
      { business_email: 'a@x.com', custom_fields: custom },
      { business_email: 'nomatch@x.com', custom_fields: {} },
      { business_email: 'b@x.com', custom_fields: {} },
      { business_email: 'c@x.com', custom_fields: {} },
    ];
    const { records, charged } = generateContacts(inputs, { credits: 2 });
    expect(charged).toBe(2);
    expect(records.map((r) => r.credit_charged)).toEqual([true, false, true, false]);
    expect(records[3]?.error).toBe(INSUFFICIENT_CREDITS);
    expect(records[0]?.custom_fields).toBe(custom);
    expect(records[0]?.original_fields).toEqual({ business_email: 'a@x.com' });
  });
});

describe('synthetic companies', () => {
  it('honour top matches, the best match keeps the given website, all typed', () => {
    const { records, charged } = generateCompanies(
      [{ company_website: 'https://globex.com', custom_fields: { k: 1 } }],
      { topMatches: 4 },
    );
    expect(records).toHaveLength(4);
    expect(charged).toBe(4);
    expect(records[0]?.website).toBe('globex.com');
    expect(records[0]?.name).toBe('Globex');
    for (const r of records) {
      companyRecordSchema.parse(r);
      expect(r.custom_fields).toEqual({ k: 1 });
      expect(r.recent_funding_date).toMatch(/^(0[1-9]|1[0-2])\/(0[1-9]|[12]\d)\/\d{4}$/);
      expect(r.employees_number).toBeGreaterThan(0);
      expect(typeof r.sic_code).toBe('number');
      expect(typeof r.naics_code).toBe('number');
    }
  });

  it('a no-match company is one record with strings "" and numbers null, not charged', () => {
    const { records, charged } = generateCompanies(
      [{ company_name: 'Nomatch Inc', custom_fields: {} }],
      { topMatches: 3 },
    );
    expect(charged).toBe(0);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      error: 'No match found',
      credit_charged: false,
      name: '',
      employees_number: null,
      sic_code: null,
    });
  });

  it('employee and revenue ranges agree with the exact numbers', () => {
    for (let i = 0; i < 50; i++) {
      const p = companyProfile({ domain: `c${i}.com`, name: '' }, 1);
      const [lo, hi] = (p.employees_category as string)
        .replace('+', '-999999')
        .split('-')
        .map(Number);
      expect(p.employees_number).toBeGreaterThanOrEqual(lo as number);
      expect(p.employees_number).toBeLessThanOrEqual(hi as number);
    }
  });
});

describe('email verification outcomes', () => {
  it.each([
    ['jane@acme.com', 'valid'],
    ['invalid@acme.com', 'invalid'],
    ['Invalid.jane@acme.com', 'invalid'],
    ['unknown@acme.com', 'unknown'],
  ])('%s -> %s', (email, status) => {
    expect(verifyEmailStatus(email)).toBe(status);
  });
});

describe('employers', () => {
  it('people known only by a profile URL or a free-mail address work at different companies', () => {
    const names = new Set(
      ['a', 'b', 'c', 'd', 'e', 'f'].map(
        (x) =>
          lookupContact({ prof_network_url: `https://profnet.example/in/${x}` }, { seed: 1 })
            .company?.name,
      ),
    );
    expect(names.size).toBeGreaterThan(2);
    const free = lookupContact({ business_email: 'jo.ray@gmail.com' }, { seed: 1 });
    expect(free.company?.website).not.toBe('gmail.com');
    expect(free.email).toBe('jo.ray@gmail.com');
  });
});

describe('generated values stay valid whatever the script of the input', () => {
  const LOCAL = /^[a-z0-9]+(?:\.[a-z0-9]+)*$/;
  const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
  const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`);
  const HANDLE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
  const expectValidCompany = (r: CompanyRecord) => {
    expect(r.website).toMatch(DOMAIN);
    const handle = (r.prof_network ?? '').replace('https://profnet.example/company/', '');
    expect(handle).toMatch(HANDLE);
    expect(r.social_a).toBe(`https://social-a.example/${handle}`);
    expect(r.social_b).toBe(`https://social-b.example/${handle}`);
    expect(r.video_channel).toBe(`https://video.example/@${handle}`);
  };
  const expectValidContact = (r: ReturnType<typeof lookupContact>) => {
    const [local, domain, ...rest] = r.email?.split('@') ?? [];
    expect(rest).toEqual([]);
    expect(local).toMatch(LOCAL);
    expect(local?.length).toBeLessThanOrEqual(64);
    expect(domain).toMatch(DOMAIN);
    expect(r.prof_network).toMatch(
      /^https:\/\/profnet\.example\/in\/[a-z0-9]+-[a-z0-9]+-[0-9a-f]+$/,
    );
  };

  it('a contact with a non-Latin name gets a real local part and profile handle', () => {
    const r = lookupContact(
      { first_name: '李', last_name: '王', company_domain: 'acme.com' },
      { seed: 1 },
    );
    expect(r).toMatchObject({ first_name: '李', last_name: '王' });
    expectValidContact(r);
    expect(r.email).toMatch(/@acme\.com$/);
    // Deterministic, and different names get different addresses.
    expect(
      lookupContact({ first_name: '李', last_name: '王', company_domain: 'acme.com' }, { seed: 1 }),
    ).toEqual(r);
    const other = lookupContact(
      { first_name: '张', last_name: '王', company_domain: 'acme.com' },
      { seed: 1 },
    );
    expect(other.email).not.toBe(r.email);
    // Only the part that had no Latin letters is replaced.
    const mixed = lookupContact(
      { first_name: 'Ann', last_name: '王', company_domain: 'acme.com' },
      { seed: 1 },
    );
    expect(mixed.email).toMatch(/^ann\.[a-z0-9]+@acme\.com$/);
  });

  it('a company with a non-Latin name gets its own website and non-empty handles', () => {
    const a = generateCompanies([{ company_name: '株式会社', custom_fields: {} }], {
      topMatches: 2,
    });
    const b = generateCompanies([{ company_name: '有限会社', custom_fields: {} }], {
      topMatches: 2,
    });
    for (const r of [...a.records, ...b.records]) expectValidCompany(r);
    const sites = [...a.records, ...b.records].map((r) => r.website);
    expect(new Set(sites).size).toBe(4);
    expect(sites).not.toContain('company.com');
    expect(a.records[0]?.name).toBe('株式会社');
    expect(
      generateCompanies([{ company_name: '株式会社', custom_fields: {} }], { topMatches: 2 }),
    ).toEqual(a);
    // A contact at that company mails it at the same website.
    const c = lookupContact(
      { first_name: 'Ann', last_name: 'Lee', company_name: '株式会社' },
      { seed: 1 },
    );
    expect(c.company?.website).toBe(a.records[0]?.website);
    expectValidContact(c);
  });

  it('over-long names still give a local part of at most 64 and domain labels of at most 63', () => {
    const c = lookupContact(
      { first_name: 'a'.repeat(255), last_name: 'b'.repeat(255), company_name: 'c'.repeat(255) },
      { seed: 1 },
    );
    expectValidContact(c);
    const { records } = generateCompanies([{ company_name: 'd'.repeat(255), custom_fields: {} }], {
      topMatches: 2,
    });
    for (const r of records) expectValidCompany(r);
  });

  it('valid for any text in any script (property)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
      fc.constantFrom('李', '王', '株式会社', 'Ζωή', 'محمد', 'Иван', '---', '  ', '😀'),
    );
    fc.assert(
      fc.property(text, text, text, fc.integer({ min: 1, max: 3 }), (first, last, company, top) => {
        fc.pre(!`${first}${last}${company}`.toLowerCase().includes('no'));
        expectValidContact(
          lookupContact({ first_name: first, last_name: last, company_name: company }, { seed: 1 }),
        );
        const { records } = generateCompanies([{ company_name: company, custom_fields: {} }], {
          topMatches: top,
        });
        for (const r of records) expectValidCompany(r);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the Latin letters of names, accents transliterated (José -> jose)', () => {
    const c = lookupContact(
      { first_name: 'José', last_name: "O'Brien-Smith", company_name: 'Acme Corp, Inc.' },
      { seed: 1 },
    );
    expect([c.email, c.prof_network]).toEqual([
      'jose.obriensmith@acme-corp-inc.com',
      'https://profnet.example/in/jose-obriensmith-de13',
    ]);
    const acme = generateCompanies([{ company_name: 'Acme Corp, Inc.', custom_fields: {} }], {
      topMatches: 2,
    }).records;
    expect(acme.map((r) => [r.website, r.social_a])).toEqual([
      ['acme-corp-inc.com', 'https://social-a.example/acme-corp-inc'],
      ['acme-corp-inc-technologies.com', 'https://social-a.example/acme-corp-inc-technologies'],
    ]);
    const sony = generateCompanies([{ company_name: '株式会社 Sony', custom_fields: {} }], {
      topMatches: 2,
    }).records;
    expect(sony.map((r) => [r.website, r.video_channel])).toEqual([
      ['sony.com', 'https://video.example/@sony'],
      ['sony-partners.com', 'https://video.example/@sony-partners'],
    ]);
  });
});
