import { z } from 'zod';

// Responses are lenient: unknown fields are kept (looseObject), ambiguous types of
// api-spec.md are accepted in both forms, and data fields may be null or missing on
// records that were not enriched.
const str = z.string().nullish();
const num = z.number().nullish();

/** A location object (contact and contact.company). */
export const locationSchema = z.looseObject({ country: str, state: str, zip_code: str });
export type Location = z.infer<typeof locationSchema>;

/** `original_fields`: declared as string, sampled as object. */
export const originalFieldsSchema = z.union([z.record(z.string(), z.unknown()), z.string()]);

/** The employer summary inside a contact record. */
export const contactCompanySchema = z.looseObject({
  name: str,
  description: str,
  website: str,
  employees_category: str,
  revenue_category: str,
  location: locationSchema.nullish(),
});

/** A contact record (api-spec.md 2.2). */
export const contactRecordSchema = z.looseObject({
  error: str,
  credit_charged: z.boolean().nullish(),
  first_name: str,
  last_name: str,
  email: str,
  office_phone: str,
  mobile_phone: str,
  location: locationSchema.nullish(),
  title: str,
  job_level: str,
  department: str,
  prof_network: str,
  company: contactCompanySchema.nullish(),
  original_fields: originalFieldsSchema.nullish(),
  custom_fields: z.record(z.string(), z.unknown()).nullish(),
});
export type ContactRecord = z.infer<typeof contactRecordSchema>;

/** A company record (api-spec.md 2.1). */
export const companyRecordSchema = z.looseObject({
  error: str,
  credit_charged: z.boolean().nullish(),
  website: str,
  name: str,
  phone: str,
  employees_category: str,
  employees_number: num,
  revenue_category: str,
  revenue_number: num,
  sic_code: num,
  naics_code: num,
  industry: str,
  prof_network: str,
  social_a: str,
  social_b: str,
  video_channel: str,
  curated_lists: str,
  number_of_available_locations: num,
  description: str,
  year_founded: num,
  recent_funding_date: str,
  recent_funding_amount: num,
  recent_funding_round: str,
  hq_address_1: str,
  hq_address_2: str,
  hq_city: str,
  hq_state: str,
  hq_zip_code: str,
  hq_country: str,
  original_fields: originalFieldsSchema.nullish(),
  custom_fields: z.record(z.string(), z.unknown()).nullish(),
});
export type CompanyRecord = z.infer<typeof companyRecordSchema>;

const remaining = z.number();

/** 200 of POST /contact. */
export const contactResponseSchema = z.looseObject({
  contact: contactRecordSchema,
  remaining_credits: remaining,
});
export type ContactResponse = z.infer<typeof contactResponseSchema>;

/** 200 of POST /company and of GET /companies/results/{id}.json. */
export const companiesResponseSchema = z.looseObject({
  companies: z.array(companyRecordSchema),
  remaining_credits: remaining,
});
export type CompaniesResponse = z.infer<typeof companiesResponseSchema>;

/** 200 of GET /contacts/results/{id}.json. */
export const contactsResultsResponseSchema = z.looseObject({
  contacts: z.array(contactRecordSchema),
  remaining_credits: remaining,
});
export type ContactsResultsResponse = z.infer<typeof contactsResultsResponseSchema>;

/** 200 of POST /contacts and POST /companies (api-spec.md 2.3). */
export const bulkJobSchema = z.looseObject({
  job_id: z.string().min(1),
  download_url: z.string().min(1),
  // Declared as string, sampled as integer: accept both.
  expiration_date: z.union([z.string(), z.number()]),
});
export type BulkJob = z.infer<typeof bulkJobSchema>;

/**
 * 202 of the results endpoints. The spec does not show it; the sandbox answers
 * `{status: "processing", processed, total}` and any body (or none) is accepted.
 */
export const pendingResultsSchema = z.looseObject({
  status: z.string().optional(),
  processed: z.number().optional(),
  total: z.number().optional(),
});
export type PendingResults = z.infer<typeof pendingResultsSchema>;

/** 200 of POST /email-verification (api-spec.md 2.4). */
export const emailVerificationResponseSchema = z.looseObject({
  // In-band, as records carry it (api-spec.md 7): e.g. credits exhausted.
  error: str,
  email: z.string(),
  status: z.enum(['valid', 'invalid', 'unknown']),
  credit_charged: z.boolean(),
  remaining_credits: z.number(),
});
export type EmailVerificationResponse = z.infer<typeof emailVerificationResponseSchema>;

/** Every error body: `{status, error, message}`, plus `errors[]` with field paths on 400. */
export const errorBodySchema = z.looseObject({
  status: z.number(),
  error: z.string(),
  message: z.string(),
  errors: z.array(z.looseObject({ path: z.string(), message: z.string() })).optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
