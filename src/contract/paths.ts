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
