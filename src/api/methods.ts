import { randomUUID } from 'node:crypto';
import type * as ResponsesModule from '../contract/responses.js';
import { Paths } from '../contract/paths.js';
import type {
  BulkCompaniesRequest,
  BulkContactsRequest,
  CompanyRecord,
  CompanyRequest,
  ContactRecord,
  ContactRequest,
} from '../contract/index.js';
import type { createCalls } from './calls.js';
import type { CallOptions, ResultsState } from './client.js';
import {
  isBulkJob,
  isCompaniesResults,
  isContactsResults,
  isVerificationAnswer,
} from './results-check.js';

type Responses = typeof ResponsesModule;
// zod and the response schemas are loaded on first need: the bodies of a bulk run pass the
// checks of results-check.ts, so a bulk run never loads them (about 8 MB of RSS and 80 ms).
let responses: Promise<Responses> | undefined;
/** A loader of one response schema, importing zod on first use. */
export function schemaOf<S>(pick: (r: Responses) => S): () => Promise<S> {
  return async () => pick(await (responses ??= import('../contract/responses.js')));
}

type Calls = ReturnType<typeof createCalls>;
/** The deadline of a call: its own, else the client's. */
export type Deadline = (opts?: CallOptions) => number | undefined;

/** The single lookups: charged per call, each with a fresh Idempotency-Key. */
export function singleMethods({ post }: Calls, by: Deadline) {
  const once = (opts?: CallOptions) => ({
    key: randomUUID(),
    bulk: false,
    deadline: by(opts),
    stop: opts?.stop,
    hooks: opts?.hooks,
  });
  return {
    enrichContact: (body: ContactRequest, opts?: CallOptions) =>
      post(
        Paths.contact,
        body,
        schemaOf((r) => r.contactResponseSchema),
        once(opts),
      ),
    enrichCompany: (body: CompanyRequest, opts?: CallOptions) =>
      post(
        Paths.company,
        body,
        schemaOf((r) => r.companiesResponseSchema),
        once(opts),
      ),
    verifyEmail: (email: string, opts?: CallOptions) =>
      post(
        Paths.emailVerification,
        { email },
        schemaOf((r) => r.emailVerificationResponseSchema),
        { ...once(opts), verification: true },
        isVerificationAnswer,
      ),
  };
}

/** The bulk submissions and their results. */
export function bulkMethods({ post, results }: Calls, by: Deadline) {
  return {
    submitContacts: (body: BulkContactsRequest, opts: { idempotencyKey: string } & CallOptions) =>
      post(
        Paths.contacts,
        body,
        schemaOf((r) => r.bulkJobSchema),
        {
          key: opts.idempotencyKey,
          bulk: true,
          deadline: by(opts),
          stop: opts.stop,
          hooks: opts.hooks,
        },
        isBulkJob,
      ),
    submitCompanies: (body: BulkCompaniesRequest, opts: { idempotencyKey: string } & CallOptions) =>
      post(
        Paths.companies,
        body,
        schemaOf((r) => r.bulkJobSchema),
        {
          key: opts.idempotencyKey,
          bulk: true,
          deadline: by(opts),
          stop: opts.stop,
          hooks: opts.hooks,
        },
        isBulkJob,
      ),
    getContactsResults: (jobId: string, opts?: { downloadUrl?: string } & CallOptions) =>
      results(
        'contacts',
        jobId,
        schemaOf((r) => r.contactsResultsResponseSchema),
        (d) => d.contacts,
        { downloadUrl: opts?.downloadUrl, deadline: by(opts), stop: opts?.stop },
        isContactsResults,
      ) as Promise<ResultsState<ContactRecord>>,
    getCompaniesResults: (jobId: string, opts?: { downloadUrl?: string } & CallOptions) =>
      results(
        'companies',
        jobId,
        schemaOf((r) => r.companiesResponseSchema),
        (d) => d.companies,
        { downloadUrl: opts?.downloadUrl, deadline: by(opts), stop: opts?.stop },
        isCompaniesResults,
      ) as Promise<ResultsState<CompanyRecord>>,
  };
}
