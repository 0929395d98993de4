import {
  companyRequestSchema,
  contactRequestSchema,
  emailProblem,
  emailVerificationRequestSchema,
  hasNoData,
  isCreditExhausted,
  Limits,
} from '../../../contract/index.js';
import { getPaths } from '../../../config/paths.js';
import { creditsScope, writeCreditsMemo, type CreditsMemo } from '../../../config/credits-memo.js';
import { EnrichError, usageError } from '../../../errors.js';
import { openService, type Service } from '../../context.js';
import { interruptOnSignal } from '../../interrupt.js';
import type { GlobalOptions } from '../../globals.js';
import { printJson, printKeyValues, say } from '../../output.js';
import { parseIntegerFlag } from '../../flags.js';
import { checkRequest, compact } from './request-flags.js';
import { cachedLookup, sayCached, type CacheFlags } from './lookup-cache.js';
import { checkCacheFlags } from './cache-flags.js';
import { canonicalAddress } from '../../../pipeline/verify/address.js';
import { fieldValueProblem, keyOfFields } from '../../../pipeline/mapping/validate.js';
import type { ApiField } from '../../../pipeline/mapping/mapping-types.js';

/** Flags of `enrich contact`. */
export interface ContactFlags extends CacheFlags {
  email?: string;
  profNetworkUrl?: string;
  firstName?: string;
  lastName?: string;
  companyDomain?: string;
  companyName?: string;
  mobile?: boolean;
  requireEmail?: boolean;
  requireMobile?: boolean;
}

/** Flags of `enrich company`. */
export interface CompanyFlags extends CacheFlags {
  name?: string;
  website?: string;
  top?: string;
}

const CONTACT_FLAGS = {
  business_email: '--email',
  prof_network_url: '--prof-network-url',
  first_name: '--first-name',
  last_name: '--last-name',
  company_domain: '--company-domain',
  company_name: '--company-name',
  business_email_exists: '--require-email',
  mobile_phone_enrichment: '--mobile',
  mobile_phone_exists: '--require-mobile',
};
const COMPANY_FLAGS = {
  company_name: '--name',
  company_website: '--website',
  top_matches_returned: '--top',
};

/**
 * The error a lookup ends with when its records came back unenriched because the account
 * ran out of credits, or undefined when none did. The service says so in-band (a 200 whose
 * record carries `error`, api-spec.md section 7), so without this the command would exit 0;
 * DESIGN.md section 4 makes credits exhausted exit 5. Other in-band errors (no match) are data.
 */
export function creditsExhaustedError(
  kind: 'contact' | 'company',
  errors: readonly (string | null | undefined)[],
  // Per record: out of credits by the answer's data (isCreditExhausted), whatever the wording.
  exhausted: readonly boolean[] = [],
): EnrichError | undefined {
  const out = errors.map((_, i) => exhausted[i] === true);
  const count = out.filter(Boolean).length;
  if (count === 0) return undefined;
  const what =
    errors.length === 1
      ? `${kind} not enriched`
      : `${count} of ${errors.length} ${kind} matches not enriched`;
  const said = errors[out.indexOf(true)];
  return new EnrichError('CREDITS_EXHAUSTED', `${what}: ${said || 'credits exhausted'}`);
}

/** Runs `fn` against the service and closes it, remembering the credits it reports. */
async function withService<T extends object>(
  globals: GlobalOptions,
  fn: (service: Service, stop: AbortSignal) => Promise<T>,
  credits: (result: T) => Omit<CreditsMemo, 'at'> | undefined,
): Promise<T & { interrupted?: true }> {
  // Ctrl-C during a lookup: the first ends the call's waits (a 429's) but not a request on its
  // way: the service may charge it, so its answer is still shown and cached.
  const stop = interruptOnSignal(
    'a request on its way gets its answer, which may be charged',
    'enrich: quit; a request on its way may still be charged\n',
  );
  const service = await openService(globals);
  try {
    const result = await fn(service, stop.signal);
    const seen = credits(result); // undefined: no answer came now (a cached one)
    if (!service.sandbox && seen) {
      const scope = creditsScope(service.baseUrl, service.client.account);
      writeCreditsMemo(getPaths().stateDir, service.settings.profile, scope, seen);
    }
    return stop.signal.aborted ? { ...result, interrupted: true } : result;
  } finally {
    stop.dispose();
    await service.close();
  }
}

/** The exit code of a lookup whose answer was shown: 130 when a Ctrl-C came meanwhile. */
function shownExit(quiet: boolean, answer: { interrupted?: true }): number {
  if (!answer.interrupted) return 0;
  say(quiet, 'enrich: interrupted; the answer that was on its way is shown above');
  return 130;
}

/**
 * Refuses a site flag (`--company-domain`, `--website`, `--prof-network-url`) that a bulk run
 * would leave out as plainly no site (`n/a`, `acme .com`): a lookup by it would be charged.
 */
function refuseNoSites(
  values: Partial<Record<ApiField, string | undefined>>,
  names: Readonly<Record<string, string>>,
): void {
  for (const [field, value] of Object.entries(values) as [ApiField, string | undefined][]) {
    const problem = value === undefined ? undefined : fieldValueProblem(field, value);
    if (problem) throw usageError(`${names[field] ?? field}: ${problem}`);
  }
}

/** `enrich contact`: validates the flags, enriches one contact and prints it. */
export async function runContact(flags: ContactFlags, globals: GlobalOptions): Promise<number> {
  checkCacheFlags(flags);
  // The one email rule (contract/email.ts), as a bulk run applies it: a lookup it could not
  // answer would still be charged. The wire itself takes any string.
  const badEmail = flags.email === undefined ? undefined : emailProblem(flags.email.trim());
  if (badEmail) throw usageError(`--email: not an email address (${badEmail})`);
  refuseNoSites(
    { company_domain: flags.companyDomain, prof_network_url: flags.profNetworkUrl },
    CONTACT_FLAGS,
  );
  const metadata = {
    ...(flags.requireEmail ? { business_email_exists: true } : {}),
    ...(flags.mobile ? { mobile_phone_enrichment: true } : {}),
    ...(flags.requireMobile ? { mobile_phone_exists: true } : {}),
  };
  const body = checkRequest(
    'contact',
    contactRequestSchema,
    {
      business_email: flags.email,
      prof_network_url: flags.profNetworkUrl,
      first_name: flags.firstName,
      last_name: flags.lastName,
      company_domain: flags.companyDomain,
      company_name: flags.companyName,
      ...(Object.keys(metadata).length ? { metadata } : {}),
    },
    CONTACT_FLAGS,
  );
  const { metadata: meta, ...request } = body;
  const looked = await withService(
    globals,
    (s, stop) =>
      cachedLookup(
        s,
        flags,
        {
          endpoint: 'contact',
          request,
          // The bulk runs' dedupe key: case, `https://`, `www.` and a trailing `/` aside.
          key: keyOfFields('contacts', request),
          metadata: meta,
          keep: (r) => !isCreditExhausted(r.contact, r.remaining_credits),
          noMatch: (r) => hasNoData(r.contact),
          charged: (r) => r.contact.credit_charged === true,
        },
        () => s.client.enrichContact(body, { stop }),
        globals.quiet,
      ),
    (r) =>
      r.cachedAt === undefined ? { remaining_credits: r.answer.remaining_credits } : undefined,
  );
  const { answer: res, cachedAt } = looked;
  sayCached(globals.quiet, cachedAt);
  if (globals.json) printJson(res);
  else printKeyValues({ ...compact(res.contact), remaining_credits: res.remaining_credits });
  // The record stays on stdout as data; the credits error goes to stderr with exit 5.
  const credits = creditsExhaustedError(
    'contact',
    [res.contact.error],
    [isCreditExhausted(res.contact, res.remaining_credits)],
  );
  if (credits) throw credits;
  if (res.contact.error) say(globals.quiet, `enrich: contact not enriched: ${res.contact.error}`);
  return shownExit(globals.quiet, looked);
}

/** `enrich company`: validates the flags, enriches one company and prints its matches. */
export async function runCompany(flags: CompanyFlags, globals: GlobalOptions): Promise<number> {
  checkCacheFlags(flags);
  const top =
    flags.top === undefined
      ? undefined
      : parseIntegerFlag('--top', flags.top, Limits.topMatchesMin, Limits.topMatchesMax);
  refuseNoSites({ company_website: flags.website }, COMPANY_FLAGS);
  const body = checkRequest(
    'company',
    companyRequestSchema,
    {
      company_name: flags.name,
      company_website: flags.website,
      ...(top !== undefined ? { metadata: { top_matches_returned: top } } : {}),
    },
    COMPANY_FLAGS,
  );
  const { metadata: meta, ...request } = body;
  const looked = await withService(
    globals,
    (s, stop) =>
      cachedLookup(
        s,
        flags,
        {
          endpoint: 'company',
          request,
          key: keyOfFields('companies', request),
          // `--top 1` is the spec's default (top_matches_returned 1): the same lookup as none.
          metadata: top === Limits.topMatchesDefault ? undefined : meta,
          keep: (r) => !r.companies.some((c) => isCreditExhausted(c, r.remaining_credits)),
          noMatch: (r) => r.companies.every((c) => hasNoData(c)),
          charged: (r) => r.companies.some((c) => c.credit_charged === true),
        },
        () => s.client.enrichCompany(body, { stop }),
        globals.quiet,
      ),
    (r) =>
      r.cachedAt === undefined ? { remaining_credits: r.answer.remaining_credits } : undefined,
  );
  const { answer: res, cachedAt } = looked;
  sayCached(globals.quiet, cachedAt);
  // Any match left unenriched for lack of credits ends the command with exit 5, once
  // every match (the enriched ones too) is on stdout.
  const exhausted = res.companies.map((c) => isCreditExhausted(c, res.remaining_credits));
  const credits = creditsExhaustedError(
    'company',
    res.companies.map((c) => c.error),
    exhausted,
  );
  if (globals.json) {
    printJson(res);
    if (credits) throw credits;
    return shownExit(globals.quiet, looked);
  }
  res.companies.forEach((company, i) => {
    if (i > 0) process.stdout.write('\n');
    const match = res.companies.length > 1 ? { match: `${i + 1} of ${res.companies.length}` } : {};
    printKeyValues({ ...match, ...compact(company) });
    // Credits errors are reported once, by the thrown error below.
    if (company.error && !exhausted[i])
      say(globals.quiet, `enrich: company not enriched: ${company.error}`);
  });
  if (res.companies.length === 0) say(globals.quiet, 'enrich: no matching company');
  process.stdout.write(res.companies.length ? '\n' : '');
  printKeyValues({ remaining_credits: res.remaining_credits });
  if (credits) throw credits;
  return shownExit(globals.quiet, looked);
}

/** Prints a verification answer: its verdict first, then the details. */
function printVerification(
  globals: GlobalOptions,
  res: { status?: unknown; email?: unknown; credit_charged?: unknown; remaining_credits?: unknown },
  error?: unknown,
): void {
  if (globals.json) return printJson(res);
  process.stdout.write(`${typeof res.status === 'string' ? res.status : 'unknown'}\n`);
  printKeyValues({
    email: res.email,
    credit_charged: res.credit_charged,
    remaining_credits: res.remaining_credits,
    ...(typeof error === 'string' && error !== '' ? { error } : {}),
  });
}

/**
 * Out of verification credits (an in-band error, api-spec.md 7) ends the lookup with exit 5,
 * the answer still printed as any other lookup's record is: `unknown`, and why.
 */
function printedAnswer(globals: GlobalOptions) {
  return (err: unknown): never => {
    const response = err instanceof EnrichError ? err.details?.response : undefined;
    if (err instanceof EnrichError && err.code === 'CREDITS_EXHAUSTED' && response) {
      const answer = response as Record<string, unknown>;
      printVerification(globals, answer, answer.error);
    }
    throw err;
  };
}

/** `enrich verify-email`: prints valid, invalid or unknown first, then the details. */
export async function runVerifyEmail(
  email: string,
  globals: GlobalOptions,
  flags: CacheFlags = {},
): Promise<number> {
  checkCacheFlags(flags);
  // Pasted with spaces or a line break around it, as verify-emails reads a cell: what is between.
  const body = checkRequest(
    'verify-email',
    emailVerificationRequestSchema,
    { email: email.trim() },
    {
      email: '<email>',
    },
  );
  const looked = await withService(
    globals,
    (s, stop) =>
      cachedLookup(
        s,
        flags,
        {
          endpoint: 'email-verification',
          // Keyed as `verify-emails` keys it (domain lowercased): the two share verdicts.
          request: { email: canonicalAddress(body.email) },
          // An in-band error (no verification credits left) is no verdict to keep.
          keep: (r) => typeof r.error !== 'string' || r.error === '',
          noMatch: () => false,
          charged: (r) => r.credit_charged === true,
        },
        () => s.client.verifyEmail(body.email, { stop }).catch(printedAnswer(globals)),
        globals.quiet,
      ),
    (r) =>
      r.cachedAt === undefined
        ? { remaining_verification_credits: r.answer.remaining_credits }
        : undefined,
  );
  const { answer: res, cachedAt } = looked;
  sayCached(globals.quiet, cachedAt);
  printVerification(globals, res);
  return shownExit(globals.quiet, looked);
}
