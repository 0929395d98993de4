import type { z } from 'zod';
import {
  bulkCompaniesRequestSchema,
  bulkContactsRequestSchema,
  companyRequestSchema,
  contactRequestSchema,
  emailVerificationRequestSchema,
  Limits,
} from '../contract/index.js';
import type { Reply, SandboxContext } from './context.js';
import { generateCompanies, generateContacts } from './generate.js';
import { errorBody } from './http.js';
import { jobResults, submitBulk } from './jobs.js';
import type { Account } from './store.js';
import { issuesToFieldErrors, summarise } from './validation.js';
import { verifyEmailStatus } from './verify-email.js';
import { SPEC_ONLY_VERIFY_QUOTA, specOnlyRecords } from './spec-only.js';

type Raw = Record<string, unknown>;

/** The service endpoints, keyed by route name. */
export type ServiceRoute =
  | 'contact'
  | 'company'
  | 'contacts'
  | 'companies'
  | 'email-verification'
  | 'contacts-results'
  | 'companies-results';

/** What a service handler gets: the authenticated account, the parsed body, the route. */
export interface ServiceRequest {
  route: ServiceRoute;
  account: Account;
  body: unknown;
  jobId?: string;
  idempotencyKey?: string;
  /** The base URL answers link to (download_url); default the sandbox's base URL. */
  baseUrl?: string;
}

/** A 400 reply naming every offending field. */
export function badRequest(errors: { path: string; message: string }[]): Reply {
  return { status: 400, body: errorBody(400, summarise(errors), { errors }) };
}

function validate(schema: z.ZodType, body: unknown): Reply | undefined {
  const r = schema.safeParse(body);
  return r.success ? undefined : badRequest(issuesToFieldErrors(r.error.issues));
}

/** Refuses an empty or oversized batch before validating every element. */
function checkBatch(
  ctx: SandboxContext,
  body: unknown,
  field: 'contacts' | 'companies',
): Reply | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const items = (body as Raw)[field];
  if (!Array.isArray(items)) return undefined;
  const max = ctx.options.maxBatch;
  if (items.length > max) {
    return badRequest([
      {
        path: field,
        message: `too many records: at most ${max} per submission (max batch), got ${items.length}`,
      },
    ]);
  }
  if (items.length === 0)
    return badRequest([{ path: field, message: 'expected at least 1 record, got 0' }]);
  return undefined;
}

/** Runs one service endpoint for an authenticated, rate-checked request. */
export function handleService(ctx: SandboxContext, r: ServiceRequest): Reply {
  const { account } = r;
  switch (r.route) {
    case 'contacts-results':
      return jobResults(ctx, account, 'contacts', r.jobId ?? '');
    case 'companies-results':
      return jobResults(ctx, account, 'companies', r.jobId ?? '');
    case 'contacts':
    case 'companies': {
      const schema =
        r.route === 'contacts' ? bulkContactsRequestSchema : bulkCompaniesRequestSchema;
      const bad = checkBatch(ctx, r.body, r.route) ?? validate(schema, r.body);
      return bad ?? submitBulk(ctx, account, r.route, r.body as Raw, r.idempotencyKey, r.baseUrl);
    }
    case 'contact':
      return validate(contactRequestSchema, r.body) ?? singleContact(ctx, account, r.body as Raw);
    case 'company':
      return validate(companyRequestSchema, r.body) ?? singleCompany(ctx, account, r.body as Raw);
    case 'email-verification':
      return (
        validate(emailVerificationRequestSchema, r.body) ?? verifyEmail(ctx, account, r.body as Raw)
      );
  }
}

function singleContact(ctx: SandboxContext, account: Account, body: Raw): Reply {
  const meta = (body.metadata ?? {}) as Raw;
  const { records, charged } = generateContacts([body], {
    seed: ctx.options.seed,
    credits: account.credits,
    echo: false,
    mobile: meta.mobile_phone_enrichment === true,
    requireEmail: meta.business_email_exists === true,
    requireMobile: meta.mobile_phone_exists === true,
  });
  charge(ctx, account, charged);
  const contact = ctx.options.specOnly ? specOnlyRecords(records)[0] : records[0];
  return { status: 200, body: { contact, remaining_credits: account.credits } };
}

function singleCompany(ctx: SandboxContext, account: Account, body: Raw): Reply {
  const meta = (body.metadata ?? {}) as Raw;
  const topMatches = (meta.top_matches_returned as number | undefined) ?? Limits.topMatchesDefault;
  // The single response requires custom_fields; the request carries none, so it is {}.
  const { records, charged } = generateCompanies([{ ...body, custom_fields: {} }], {
    seed: ctx.options.seed,
    credits: account.credits,
    topMatches,
  });
  charge(ctx, account, charged);
  const companies = ctx.options.specOnly ? specOnlyRecords(records) : records;
  return { status: 200, body: { companies, remaining_credits: account.credits } };
}

function charge(ctx: SandboxContext, account: Account, n: number): void {
  ctx.store.charge(account, n);
  ctx.stats.credits_charged += n;
}

function verifyEmail(ctx: SandboxContext, account: Account, body: Raw): Reply {
  const email = body.email as string;
  if (account.verification_credits < 1) {
    if (ctx.options.specOnly) {
      // In-band, as the spec says exhausted credits are reported.
      const error = SPEC_ONLY_VERIFY_QUOTA;
      const body = { email, status: 'unknown', credit_charged: false, remaining_credits: 0, error };
      return { status: 200, body };
    }
    return {
      status: 403,
      body: errorBody(
        403,
        'Verification credits exhausted: the account has no email verification credits left',
        {
          code: 'verification_credits_exhausted',
        },
      ),
    };
  }
  const status = verifyEmailStatus(email);
  // An "unknown" answer is not billed: the service could not tell.
  const charged = status !== 'unknown';
  if (charged) {
    ctx.store.charge(account, 0, 1);
    ctx.stats.verification_credits_charged += 1;
  }
  return {
    status: 200,
    body: {
      email,
      status,
      credit_charged: charged,
      remaining_credits: account.verification_credits,
    },
  };
}
