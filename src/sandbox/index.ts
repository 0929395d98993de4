/** The sandbox: a faithful local implementation of the enrichment service (DESIGN.md section 6). */
export { startSandbox, resolveSandboxOptions } from './start.js';
export type {
  AccountUpdate,
  FaultStep,
  Faults,
  KeyListing,
  RetryAfterForm,
  SandboxAdmin,
  SandboxHandle,
  SandboxOptions,
  SandboxStats,
} from './types.js';
export { generateCompanies, generateContacts, INSUFFICIENT_CREDITS } from './generate.js';
export type { CompanyInput, GenerateOptions, Generated } from './generate.js';
export { lookupContact, NO_MATCH, NO_EMAIL_MATCH, NO_MOBILE_MATCH } from './generate-contact.js';
export type { ContactInput, ContactLookupOptions } from './generate-contact.js';
export { companyProfile, companyIdentity } from './generate-company.js';
export { verifyEmailStatus } from './verify-email.js';
export { parseFaultSpec, faultProblems } from './faults.js';
export { takeToken, newBucket } from './rate-limit.js';
export { buildOpenApi } from './openapi.js';
export {
  adminCreateAccount,
  adminCreateKey,
  adminGetAccount,
  adminListAccounts,
  adminListKeys,
  adminRevokeKey,
  adminUpdateAccount,
} from './admin-client.js';
export type { AdminTarget } from './admin-client.js';
