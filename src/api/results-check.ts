/**
 * Quick shape checks of the bodies a bulk run reads: results, submitted jobs, 202
 * progress and error bodies. zod checks every record by building a copy of it (a second
 * object tree per ~1.5 KB record, the largest allocation of a bulk run), and loading it
 * costs ~8 MB; these predicates only read. The `is…` checks are conservative: true only
 * when the schema in src/contract/responses.ts would accept the value unchanged, so a
 * false sends the body to zod for its verdict and its precise message. The `…Of` readers
 * have no zod behind them and must agree with their schema exactly. Both are
 * property-tested against the schemas in test/api/results-check.test.ts.
 */

import { COMPANY_RECORD_FIELDS } from '../contract/limits.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNullish = (v: unknown) => v === undefined || v === null;
const strOk = (v: unknown) => isNullish(v) || typeof v === 'string';
const numOk = (v: unknown) => isNullish(v) || (typeof v === 'number' && Number.isFinite(v));
const boolOk = (v: unknown) => isNullish(v) || typeof v === 'boolean';

const allStr = (o: Obj, keys: readonly string[]) => keys.every((k) => strOk(o[k]));
const allNum = (o: Obj, keys: readonly string[]) => keys.every((k) => numOk(o[k]));

const LOCATION = ['country', 'state', 'zip_code'];
const locationOk = (v: unknown) => isNullish(v) || (isObj(v) && allStr(v, LOCATION));

const CONTACT_STR = [
  'error',
  'first_name',
  'last_name',
  'email',
  'office_phone',
  'mobile_phone',
  'title',
  'job_level',
  'department',
  'prof_network',
];
const EMPLOYER_STR = ['name', 'description', 'website', 'employees_category', 'revenue_category'];
const COMPANY_NUM: readonly string[] = [
  'employees_number',
  'revenue_number',
  'sic_code',
  'naics_code',
  'number_of_available_locations',
  'year_founded',
  'recent_funding_amount',
];
// Every other field of the company record (api-spec.md 2.1) is a string.
const COMPANY_STR = ['error', ...COMPANY_RECORD_FIELDS.filter((f) => !COMPANY_NUM.includes(f))];

/** The fields every record kind shares: credit flag and the echoed fields. */
function commonOk(r: Obj): boolean {
  const of = r.original_fields;
  return (
    boolOk(r.credit_charged) &&
    (isNullish(of) || typeof of === 'string' || isObj(of)) &&
    (isNullish(r.custom_fields) || isObj(r.custom_fields))
  );
}

/** True when `r` is a contact record the schema accepts as is. */
export function isContactRecord(r: unknown): boolean {
  if (!isObj(r) || !commonOk(r) || !allStr(r, CONTACT_STR) || !locationOk(r.location)) return false;
  const c = r.company;
  return isNullish(c) || (isObj(c) && allStr(c, EMPLOYER_STR) && locationOk(c.location));
}

/** True when `r` is a company record the schema accepts as is. */
export function isCompanyRecord(r: unknown): boolean {
  return isObj(r) && commonOk(r) && allStr(r, COMPANY_STR) && allNum(r, COMPANY_NUM);
}

/** A check of a results body: `{<key>: [records], remaining_credits: number}`. */
function resultsCheck(key: string, record: (r: unknown) => boolean) {
  return (body: unknown): boolean =>
    isObj(body) &&
    typeof body.remaining_credits === 'number' &&
    Number.isFinite(body.remaining_credits) &&
    Array.isArray(body[key]) &&
    (body[key] as unknown[]).every(record);
}

/** True when a GET /contacts/results body matches its schema as is. */
export const isContactsResults = resultsCheck('contacts', isContactRecord);

/** True when a GET /companies/results (or POST /company) body matches its schema as is. */
export const isCompaniesResults = resultsCheck('companies', isCompanyRecord);

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isFilled = (v: unknown) => typeof v === 'string' && v.length > 0;

/** True when a POST /contacts or /companies body is a job the schema accepts as is. */
export function isBulkJob(body: unknown): boolean {
  return (
    isObj(body) &&
    isFilled(body.job_id) &&
    isFilled(body.download_url) &&
    (typeof body.expiration_date === 'string' || isFiniteNumber(body.expiration_date))
  );
}

const VERDICTS: ReadonlySet<unknown> = new Set(['valid', 'invalid', 'unknown']);

/**
 * A 200 of POST /email-verification (api-spec.md 2.4) that its schema takes unchanged: a run
 * of single verifications (`verify-emails`) then never loads zod nor copies each answer.
 */
export function isVerificationAnswer(body: unknown): boolean {
  return (
    isObj(body) &&
    typeof body.email === 'string' &&
    VERDICTS.has(body.status) &&
    typeof body.credit_charged === 'boolean' &&
    typeof body.remaining_credits === 'number' &&
    Number.isFinite(body.remaining_credits) &&
    strOk(body.error)
  );
}

/**
 * The progress a 202 results body reports, when it has the shape the sandbox sends
 * (`{status, processed, total}`, every part optional); nothing for any other body.
 */
export function pendingProgressOf(body: unknown): { processed?: number; total?: number } {
  if (!isObj(body) || !(body.status === undefined || typeof body.status === 'string')) return {};
  const { processed, total } = body;
  if (processed !== undefined && !isFiniteNumber(processed)) return {};
  if (total !== undefined && !isFiniteNumber(total)) return {};
  return {
    ...(processed !== undefined ? { processed } : {}),
    ...(total !== undefined ? { total } : {}),
  };
}

/** An error body of api-spec.md (`{status, error, message, errors?}`), when it has that shape. */
export function errorBodyOf(
  body: unknown,
): { message: string; errors: { path: string; message: string }[] } | undefined {
  if (
    !isObj(body) ||
    !isFiniteNumber(body.status) ||
    typeof body.error !== 'string' ||
    typeof body.message !== 'string'
  )
    return undefined;
  const errors = body.errors;
  if (errors === undefined) return { message: body.message, errors: [] };
  if (
    !Array.isArray(errors) ||
    !errors.every((e) => isObj(e) && typeof e.path === 'string' && typeof e.message === 'string')
  )
    return undefined;
  return { message: body.message, errors: errors as { path: string; message: string }[] };
}
