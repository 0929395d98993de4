import { z } from 'zod';
import { emailProblem } from './email.js';
import { Limits, type CompanyInputField, type ContactInputField } from './limits.js';
import {
  companyCombinationError,
  contactCombinationError,
  mobileDependencyError,
} from './rules.js';

const max = Limits.fieldMaxLength;
const boundedString = z.string().max(max);
const nonEmptyBounded = z.string().min(1).max(max);

/** Contact identifying fields (api-spec.md 4.1 / 4.3 element). */
export const contactFieldsShape = {
  business_email: boundedString.optional(),
  company_domain: boundedString.optional(),
  company_name: nonEmptyBounded.optional(),
  first_name: nonEmptyBounded.optional(),
  last_name: nonEmptyBounded.optional(),
  prof_network_url: boundedString.optional(),
};

const contactMetadataShape = {
  business_email_exists: z.boolean().optional(),
  mobile_phone_enrichment: z.boolean().optional(),
  mobile_phone_exists: z.boolean().optional(),
};

/** Metadata of POST /contact. */
export const contactMetadataSchema = z.strictObject(contactMetadataShape).superRefine((m, ctx) => {
  const msg = mobileDependencyError(m);
  if (msg) ctx.addIssue({ code: 'custom', path: ['mobile_phone_exists'], message: msg });
});

/** Metadata of POST /contacts (adds `real_time_verification`). */
export const bulkContactMetadataSchema = z
  .strictObject({ ...contactMetadataShape, real_time_verification: z.boolean().optional() })
  .superRefine((m, ctx) => {
    const msg = mobileDependencyError(m);
    if (msg) ctx.addIssue({ code: 'custom', path: ['mobile_phone_exists'], message: msg });
  });

function refineContact(c: Partial<Record<ContactInputField, unknown>>, ctx: z.RefinementCtx) {
  const msg = contactCombinationError(c);
  if (msg) ctx.addIssue({ code: 'custom', path: [], message: msg });
}

/** Body of POST /contact. */
export const contactRequestSchema = z
  .strictObject({ ...contactFieldsShape, metadata: contactMetadataSchema.optional() })
  .superRefine(refineContact);
export type ContactRequest = z.infer<typeof contactRequestSchema>;

/** Caller metadata echoed back in results. */
export const customFieldsSchema = z.record(z.string(), z.unknown());
export type CustomFields = z.infer<typeof customFieldsSchema>;

/** One element of POST /contacts `contacts`. */
export const bulkContactSchema = z
  .strictObject({ ...contactFieldsShape, custom_fields: customFieldsSchema })
  .superRefine(refineContact);
export type BulkContact = z.infer<typeof bulkContactSchema>;

/** Body of POST /contacts. */
export const bulkContactsRequestSchema = z.strictObject({
  contacts: z.array(bulkContactSchema),
  metadata: bulkContactMetadataSchema.optional(),
});
export type BulkContactsRequest = z.infer<typeof bulkContactsRequestSchema>;

/** `metadata.top_matches_returned`: 1..10, default 1. */
export const topMatchesSchema = z
  .number()
  .int()
  .min(Limits.topMatchesMin)
  .max(Limits.topMatchesMax)
  .default(Limits.topMatchesDefault);

const companyMetadataSchema = z.strictObject({ top_matches_returned: topMatchesSchema });

const companyFieldsShape = {
  company_name: boundedString.optional(),
  company_website: z.string().optional(),
};

function refineCompany(c: Partial<Record<CompanyInputField, unknown>>, ctx: z.RefinementCtx) {
  const msg = companyCombinationError(c);
  if (msg) ctx.addIssue({ code: 'custom', path: [], message: msg });
}

/** Body of POST /company. */
export const companyRequestSchema = z
  .strictObject({ ...companyFieldsShape, metadata: companyMetadataSchema.optional() })
  .superRefine(refineCompany);
export type CompanyRequest = z.input<typeof companyRequestSchema>;

/** One element of POST /companies `companies`. */
export const bulkCompanySchema = z
  .strictObject({ ...companyFieldsShape, custom_fields: customFieldsSchema })
  .superRefine(refineCompany);
export type BulkCompany = z.infer<typeof bulkCompanySchema>;

/** Body of POST /companies. */
export const bulkCompaniesRequestSchema = z.strictObject({
  companies: z.array(bulkCompanySchema),
  metadata: companyMetadataSchema.optional(),
});
export type BulkCompaniesRequest = z.input<typeof bulkCompaniesRequestSchema>;

/** Body of POST /email-verification. */
export const emailVerificationRequestSchema = z.strictObject({
  // "must be a valid email format" (api-spec.md 4.7): the one rule of email.ts, not zod's own.
  email: z.string().superRefine((value, ctx) => {
    const problem = emailProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `not an email address: ${problem}` });
  }),
});
export type EmailVerificationRequest = z.infer<typeof emailVerificationRequestSchema>;
