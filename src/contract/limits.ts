/** Limits of api-spec.md section 8, shared by the client, the pipeline and the sandbox. */
export const Limits = {
  fieldMaxLength: 255,
  topMatchesMin: 1,
  topMatchesMax: 10,
  topMatchesDefault: 1,
} as const;

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
