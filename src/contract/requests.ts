import { z } from 'zod';
import {
  CONTACT_COMBINATIONS,
  Limits,
  type CompanyInputField,
  type ContactInputField,
} from './limits.js';

const max = Limits.fieldMaxLength;
const boundedString = z.string().max(max);
const nonEmptyBounded = z.string().min(1).max(max);

/** True when a field holds a non-blank string: blank values do not satisfy a combination. */
function present(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** Returns the combination rule message when a contact satisfies none of them. */
export function contactCombinationError(
  input: Partial<Record<ContactInputField, unknown>>,
): string | undefined {
  const ok = CONTACT_COMBINATIONS.some((combo) => combo.every((f) => present(input[f])));
  if (ok) return undefined;
  return 'needs at least one of: prof_network_url; business_email; first_name + last_name + company_domain; first_name + last_name + company_name';
}

/** Returns the company rule message when neither name nor website is present. */
export function companyCombinationError(
  input: Partial<Record<CompanyInputField, unknown>>,
): string | undefined {
  if (present(input.company_name) || present(input.company_website)) return undefined;
  return 'needs at least one of: company_website; company_name';
}

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

type MobileMeta = { mobile_phone_enrichment?: boolean; mobile_phone_exists?: boolean };

/** The `mobile_phone_exists` dependency: only together with `mobile_phone_enrichment` = true. */
export function mobileDependencyError(meta: MobileMeta | undefined): string | undefined {
  if (meta?.mobile_phone_exists !== undefined && meta.mobile_phone_enrichment !== true) {
    return 'mobile_phone_exists may be given only together with mobile_phone_enrichment = true';
  }
  return undefined;
}

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
  email: z.email().max(max),
});
export type EmailVerificationRequest = z.infer<typeof emailVerificationRequestSchema>;
