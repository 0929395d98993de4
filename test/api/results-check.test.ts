import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  errorBodyOf,
  isBulkJob,
  isCompaniesResults,
  isContactsResults,
  pendingProgressOf,
} from '../../src/api/results-check.js';
import {
  bulkJobSchema,
  companiesResponseSchema,
  contactsResultsResponseSchema,
  errorBodySchema,
  pendingResultsSchema,
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

// Small bodies of the other answers a bulk run reads, valid or not, field by field.
const scalar = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
);
const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, scalar);
const shaped = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, scalar as fc.Arbitrary<unknown>);

describe('quick checks of the other bodies a bulk run reads, against their schemas', () => {
  it('a submitted job (POST /contacts, /companies): only what bulkJobSchema accepts unchanged', () => {
    let yes = 0;
    fc.assert(
      fc.property(
        shaped(
          fc.record({
            job_id: sometimes(fc.string({ maxLength: 3 })),
            download_url: sometimes(fc.string({ maxLength: 3 })),
            expiration_date: sometimes(fc.oneof(fc.integer(), fc.string({ maxLength: 3 }))),
            extra: scalar,
          }),
        ),
        (b) => {
          const parsed = bulkJobSchema.safeParse(b);
          expect(isBulkJob(b)).toBe(parsed.success);
          if (!parsed.success) return;
          yes++;
          expect(parsed.data).toEqual(b);
        },
      ),
      { numRuns: 3000 },
    );
    expect(yes).toBeGreaterThan(50);
  });

  it("a 202's progress: read exactly when pendingResultsSchema accepts the body", () => {
    fc.assert(
      fc.property(
        shaped(
          fc.record(
            {
              status: sometimes(fc.string({ maxLength: 3 })),
              processed: sometimes(fc.nat()),
              total: sometimes(fc.nat()),
            },
            { requiredKeys: [] },
          ),
        ),
        (b) => {
          const parsed = pendingResultsSchema.safeParse(b);
          const want = parsed.success
            ? Object.fromEntries(
                (['processed', 'total'] as const)
                  .filter((k) => parsed.data[k] !== undefined)
                  .map((k) => [k, parsed.data[k]]),
              )
            : {};
          expect(pendingProgressOf(b)).toEqual(want);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('an error body: message and field errors read exactly when errorBodySchema accepts it', () => {
    let withFieldErrors = 0;
    const fieldError = fc.record({
      path: sometimes(fc.string({ maxLength: 3 })),
      message: sometimes(fc.string({ maxLength: 3 })),
    });
    fc.assert(
      fc.property(
        shaped(
          fc.record(
            {
              status: sometimes(fc.integer()),
              error: sometimes(fc.string({ maxLength: 3 })),
              message: sometimes(fc.string({ maxLength: 3 })),
              errors: sometimes(fc.array(shaped(fieldError), { maxLength: 3 })),
            },
            { requiredKeys: ['status', 'error', 'message'] },
          ),
        ),
        (b) => {
          const parsed = errorBodySchema.safeParse(b);
          if (parsed.success && (parsed.data.errors?.length ?? 0) > 0) withFieldErrors++;
          expect(errorBodyOf(b)).toEqual(
            parsed.success
              ? {
                  message: parsed.data.message,
                  errors: (parsed.data.errors ?? []).map((e) => ({
                    path: e.path,
                    message: e.message,
                  })),
                }
              : undefined,
          );
        },
      ),
      { numRuns: 3000 },
    );
    // The property means little unless valid bodies with field errors come up.
    expect(withFieldErrors).toBeGreaterThan(0);
  });
});
