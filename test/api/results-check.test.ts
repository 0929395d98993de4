import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCompaniesResults, isContactsResults } from '../../src/api/results-check.js';
import {
  companiesResponseSchema,
  contactsResultsResponseSchema,
} from '../../src/contract/index.js';
import { generateCompanies, generateContacts } from '../../src/sandbox/index.js';

// Any JSON-ish value a field might hold, valid or not.
const value = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.boolean(),
  fc.constant([]),
  fc.dictionary(
    fc.constantFrom('country', 'state', 'zip_code', 'x'),
    fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    { maxKeys: 3 },
  ),
);
const CONTACT_KEYS = [
  'error',
  'credit_charged',
  'first_name',
  'email',
  'title',
  'location',
  'company',
  'original_fields',
  'custom_fields',
  'extra',
];
const COMPANY_KEYS = [
  'error',
  'credit_charged',
  'name',
  'employees_number',
  'year_founded',
  'hq_city',
  'original_fields',
  'custom_fields',
  'extra',
];
const record = (keys: string[]) =>
  fc.oneof(
    fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length }),
    // mostly-valid records, so the accepting side is exercised too
    fc.record({
      credit_charged: fc.boolean(),
      first_name: fc.string(),
      name: fc.string(),
      employees_number: fc.oneof(fc.integer(), fc.constant(null)),
      location: fc.constant({ country: 'FR', state: null }),
      company: fc.oneof(
        fc.constant(null),
        fc.constant({ name: 'Acme', location: { country: 'US' } }),
      ),
      custom_fields: fc.constant({ enrich_row: 3 }),
      original_fields: fc.oneof(fc.constant('{}'), fc.constant({ a: 1 })),
    }),
  );
const body = (key: string, keys: string[]) =>
  fc.record({
    [key]: fc.oneof(fc.array(record(keys), { maxLength: 3 }), value),
    remaining_credits: fc.oneof(fc.integer(), value),
  });

let accepted = 0;
describe('quick results checks', () => {
  it('accept only bodies the contacts schema accepts unchanged', () => {
    fc.assert(
      fc.property(body('contacts', CONTACT_KEYS), (b) => {
        if (!isContactsResults(b)) return;
        accepted++;
        const parsed = contactsResultsResponseSchema.safeParse(b);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(b);
      }),
      { numRuns: 3000 },
    );
    // The property means little unless the quick path accepts a fair share of bodies.
    expect(accepted).toBeGreaterThan(100);
  });

  it('accept only bodies the companies schema accepts unchanged', () => {
    fc.assert(
      fc.property(body('companies', COMPANY_KEYS), (b) => {
        if (!isCompaniesResults(b)) return;
        const parsed = companiesResponseSchema.safeParse(b);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(b);
      }),
      { numRuns: 3000 },
    );
  });

  it('take the quick path for what the service sends', () => {
    const contacts = generateContacts(
      [
        { business_email: 'jane@acme.com', custom_fields: { enrich_row: 0 } },
        { first_name: 'Zoë', last_name: 'Müller', company_domain: 'acme.com', custom_fields: {} },
      ],
      { mobile: true },
    ).records;
    const companies = generateCompanies(
      [{ company_website: 'https://acme.com', custom_fields: { enrich_row: 0 } }],
      { topMatches: 3 },
    ).records;
    const wire = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;
    expect(isContactsResults(wire({ contacts, remaining_credits: 5 }))).toBe(true);
    expect(isCompaniesResults(wire({ companies, remaining_credits: 5 }))).toBe(true);
  });

  it('leave anything doubtful to the schema', () => {
    expect(isContactsResults({ contacts: [{ email: 3 }], remaining_credits: 1 })).toBe(false);
    expect(isContactsResults({ contacts: [], remaining_credits: '1' })).toBe(false);
    expect(isContactsResults({ contacts: [[]], remaining_credits: 1 })).toBe(false);
    expect(isCompaniesResults({ companies: [{ sic_code: '7372' }], remaining_credits: 1 })).toBe(
      false,
    );
    expect(isCompaniesResults({ contacts: [], remaining_credits: 1 })).toBe(false);
  });
});
