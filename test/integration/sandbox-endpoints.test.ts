import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  companiesResponseSchema,
  contactResponseSchema,
  contactsResultsResponseSchema,
  bulkJobSchema,
  emailVerificationResponseSchema,
  COMPANY_RECORD_FIELDS,
} from '../../src/contract/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.close());

const STRING_FIELDS = [
  'error',
  'first_name',
  'last_name',
  'email',
  'office_phone',
  'mobile_phone',
  'title',
  'job_level',
  'department',
  'prof_network',
];

describe('sandbox service endpoints', () => {
  it('POST /contact answers an enriched contact with every field of api-spec.md 2.2', async () => {
    const a = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: { first_name: 'Jane', last_name: 'Doe', company_domain: 'https://www.acme.com/about' },
    });
    expect(a.status).toBe(200);
    contactResponseSchema.parse(a.json);
    const c = a.json.contact;
    for (const f of STRING_FIELDS) expect(typeof c[f]).toBe('string');
    expect(c.error).toBe('');
    expect(c.credit_charged).toBe(true);
    expect(c.first_name).toBe('Jane');
    expect(c.email).toBe('jane.doe@acme.com');
    expect(c.office_phone).toMatch(/^\+\d[\d ]+$/);
    expect(c.mobile_phone).toBe('');
    expect(['C-Level', 'VP', 'Director', 'Manager', 'Staff']).toContain(c.job_level);
    expect(Object.keys(c.location).sort()).toEqual(['country', 'state', 'zip_code']);
    expect(c.company.website).toBe('acme.com');
    expect(c.company.name).toBe('Acme');
    expect(Object.keys(c.company.location).sort()).toEqual(['country', 'state', 'zip_code']);
    expect(c).not.toHaveProperty('original_fields');
    expect(a.json.remaining_credits).toBe(99_999);
  });

  it('adds a mobile phone only with mobile_phone_enrichment', async () => {
    const a = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: { business_email: 'sam.lee@globex.io', metadata: { mobile_phone_enrichment: true } },
    });
    expect(a.json.contact.mobile_phone).toMatch(/^\+\d[\d ]+$/);
    expect(a.json.contact.first_name).toBe('Sam');
    expect(a.json.contact.email).toBe('sam.lee@globex.io');
  });

  it('POST /company answers top_matches_returned records with every field typed', async () => {
    const a = await call(sb.url, 'POST', '/company', {
      key: sb.apiKey,
      body: { company_website: 'initech.com', metadata: { top_matches_returned: 3 } },
    });
    expect(a.status).toBe(200);
    companiesResponseSchema.parse(a.json);
    expect(a.json.companies).toHaveLength(3);
    const [best] = a.json.companies;
    for (const f of COMPANY_RECORD_FIELDS) expect(best).toHaveProperty(f);
    for (const f of [
      'employees_number',
      'revenue_number',
      'sic_code',
      'naics_code',
      'year_founded',
      'recent_funding_amount',
      'number_of_available_locations',
    ])
      expect(typeof best[f]).toBe('number');
    expect(best.website).toBe('initech.com');
    expect(best.recent_funding_date).toMatch(/^\d{2}\/\d{2}\/\d{4}$/);
    expect(best.phone).toMatch(/^\+/);
    expect(best.original_fields).toEqual({ company_website: 'initech.com' });
    expect(best.custom_fields).toEqual({});
    expect(new Set(a.json.companies.map((c: { name: string }) => c.name)).size).toBe(3);
  });

  it('POST /contacts then GET its results echoes custom_fields and original_fields in order', async () => {
    const contacts = [
      contact(0),
      contact(1, { custom_fields: { id: 'x', nested: { a: [1, 2] } } }),
      contact(2),
    ];
    const job = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body: { contacts } });
    expect(job.status).toBe(200);
    bulkJobSchema.parse(job.json);
    expect(job.json.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(job.json.download_url).toBe(`${sb.url}/contacts/results/${job.json.job_id}.json`);
    expect(Number.isInteger(job.json.expiration_date)).toBe(true);
    const res = await call(sb.url, 'GET', new URL(job.json.download_url).pathname, {
      key: sb.apiKey,
    });
    expect(res.status).toBe(200);
    contactsResultsResponseSchema.parse(res.json);
    expect(res.json.contacts.map((c: { custom_fields: unknown }) => c.custom_fields)).toEqual(
      contacts.map((c) => c.custom_fields),
    );
    expect(res.json.contacts[1].original_fields).toEqual({
      first_name: 'Jane1',
      last_name: 'Doe',
      company_domain: 'acme.com',
    });
    expect(typeof res.json.remaining_credits).toBe('number');
  });

  it('POST /companies then GET its results: top matches per input, each echoing custom_fields', async () => {
    const companies = [
      { company_name: 'Umbrella', custom_fields: { r: 1 } },
      { company_website: 'hooli.com', custom_fields: { r: 2 } },
    ];
    const job = await call(sb.url, 'POST', '/companies', {
      key: sb.apiKey,
      body: { companies, metadata: { top_matches_returned: 2 } },
    });
    expect(job.status).toBe(200);
    expect(job.json.download_url).toBe(`${sb.url}/companies/results/${job.json.job_id}.json`);
    const res = await call(sb.url, 'GET', `/companies/results/${job.json.job_id}.json`, {
      key: sb.apiKey,
    });
    expect(res.status).toBe(200);
    companiesResponseSchema.parse(res.json);
    expect(res.json.companies.map((c: { custom_fields: unknown }) => c.custom_fields)).toEqual([
      { r: 1 },
      { r: 1 },
      { r: 2 },
      { r: 2 },
    ]);
    expect(res.json.companies[2].website).toBe('hooli.com');
  });

  it('POST /email-verification answers valid, invalid and unknown from the magic local parts', async () => {
    const before = sb.admin.getAccount(sb.accountId)?.verification_credits ?? 0;
    const v = await call(sb.url, 'POST', '/email-verification', {
      key: sb.apiKey,
      body: { email: 'jane@acme.com' },
    });
    expect(v.status).toBe(200);
    emailVerificationResponseSchema.parse(v.json);
    expect(v.json).toEqual({
      email: 'jane@acme.com',
      status: 'valid',
      credit_charged: true,
      remaining_credits: before - 1,
    });
    const i = await call(sb.url, 'POST', '/email-verification', {
      key: sb.apiKey,
      body: { email: 'invalid.x@acme.com' },
    });
    expect(i.json.status).toBe('invalid');
    const u = await call(sb.url, 'POST', '/email-verification', {
      key: sb.apiKey,
      body: { email: 'unknown@acme.com' },
    });
    expect(u.json).toMatchObject({
      status: 'unknown',
      credit_charged: false,
      remaining_credits: before - 2,
    });
  });

  it('answers the same input identically (deterministic) and no match for magic inputs', async () => {
    const body = { business_email: 'pat@contoso.com' };
    const a = await call(sb.url, 'POST', '/contact', { key: sb.apiKey, body });
    const b = await call(sb.url, 'POST', '/contact', { key: sb.apiKey, body });
    expect(a.json.contact).toEqual(b.json.contact);
    const before = b.json.remaining_credits;
    const n = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: { business_email: 'nomatch@contoso.com' },
    });
    expect(n.json.contact).toMatchObject({
      error: 'No match found',
      credit_charged: false,
      email: '',
      title: '',
    });
    expect(n.json.remaining_credits).toBe(before);
  });

  it('GET /openapi.json is an OpenAPI 3.1 document of the seven endpoints, without auth', async () => {
    const a = await call(sb.url, 'GET', '/openapi.json');
    expect(a.status).toBe(200);
    expect(a.json.openapi).toBe('3.1.0');
    expect(Object.keys(a.json.paths).sort()).toEqual([
      '/companies',
      '/companies/results/{job_id}.json',
      '/company',
      '/contact',
      '/contacts',
      '/contacts/results/{job_id}.json',
      '/email-verification',
    ]);
    const req = a.json.paths['/contacts'].post.requestBody.content['application/json'].schema;
    expect(req.properties.contacts.type).toBe('array');
    expect(req.properties.contacts.items.properties.first_name.maxLength).toBe(255);
  });
});
