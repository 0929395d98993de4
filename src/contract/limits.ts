/** Limits of api-spec.md section 8, shared by the client, the pipeline and the sandbox. */
export const Limits = {
  fieldMaxLength: 255,
  topMatchesMin: 1,
  topMatchesMax: 10,
  topMatchesDefault: 1,
} as const;

/**
 * A text's length in characters as api-spec.md's limits count them: code points, as the
 * contract schemas (zod) count them, so a name of 200 emoji or rare CJK characters (400 UTF-16
 * units) is within 255. The UTF-16 length is never shorter, so only a text over the limit in
 * units is counted again.
 */
export function charLength(value: string, limit: number = Limits.fieldMaxLength): number {
  if (value.length <= limit) return value.length;
  let n = 0;
  for (const _ of value) n += 1;
  return n;
}

/** The contact input fields a request may carry (api-spec.md 4.1/4.3). */
export const CONTACT_INPUT_FIELDS = [
  'business_email',
  'company_domain',
  'company_name',
  'first_name',
  'last_name',
  'prof_network_url',
] as const;
export type ContactInputField = (typeof CONTACT_INPUT_FIELDS)[number];

/** The company input fields a request may carry (api-spec.md 4.2/4.4). */
export const COMPANY_INPUT_FIELDS = ['company_name', 'company_website'] as const;
export type CompanyInputField = (typeof COMPANY_INPUT_FIELDS)[number];

/** The combinations of which a contact must contain at least one (api-spec.md 4.1). */
export const CONTACT_COMBINATIONS: readonly (readonly ContactInputField[])[] = [
  ['prof_network_url'],
  ['business_email'],
  ['first_name', 'last_name', 'company_domain'],
  ['first_name', 'last_name', 'company_name'],
];

/** The company record fields in the order of api-spec.md 2.1 (used for output columns). */
export const COMPANY_RECORD_FIELDS = [
  'website',
  'name',
  'phone',
  'employees_category',
  'employees_number',
  'revenue_category',
  'revenue_number',
  'sic_code',
  'naics_code',
  'industry',
  'prof_network',
  'social_a',
  'social_b',
  'video_channel',
  'curated_lists',
  'number_of_available_locations',
  'description',
  'year_founded',
  'recent_funding_date',
  'recent_funding_amount',
  'recent_funding_round',
  'hq_address_1',
  'hq_address_2',
  'hq_city',
  'hq_state',
  'hq_zip_code',
  'hq_country',
] as const;
