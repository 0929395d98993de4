/**
 * Quick shape checks of bulk results bodies. zod checks every record by building a
 * copy of it (a second object tree per ~1.5 KB record, the largest allocation of a
 * bulk run); these predicates only read. They are conservative: true only when the
 * schema in src/contract/responses.ts would accept the value unchanged (property-tested
 * in test/api/results-check.test.ts), so a false sends the body to zod for its verdict
 * and its precise message.
 */

import { COMPANY_RECORD_FIELDS } from '../contract/index.js';

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
