/** Endpoint paths of api-spec.md section 4. */
export const Paths = {
  contact: '/contact',
  company: '/company',
  contacts: '/contacts',
  companies: '/companies',
  emailVerification: '/email-verification',
  contactsResults: (jobId: string) => `/contacts/results/${encodeURIComponent(jobId)}.json`,
  companiesResults: (jobId: string) => `/companies/results/${encodeURIComponent(jobId)}.json`,
} as const;

/** The two kinds of bulk job (one name for the concept everywhere). */
export type BulkKind = 'contacts' | 'companies';

/**
 * The service a base URL names, as the endpoints hang from it: its origin and path, trailing
 * slashes dropped (`https://h/api/` is `https://h/api`, `https://h/` is `https://h`). What the
 * client remembers of a service (its balance, whether it honours Idempotency-Key, its answers)
 * is kept under this: two services under one origin are two services.
 */
export function serviceOf(baseUrl: string | URL): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
