import type { CompanyRecord, ContactRecord } from '../contract/index.js';
import { COMPANY_INPUT_FIELDS, CONTACT_INPUT_FIELDS } from '../contract/index.js';
import { emptyCompanyProfile, companyIdentity, companyProfile } from './generate-company.js';
import {
  NO_EMAIL_MATCH,
  NO_MATCH,
  NO_MOBILE_MATCH,
  emptyContact,
  lookupContact,
  type ContactInput,
  type ContactLookupOptions,
} from './generate-contact.js';
import { isNoMatch } from './normalise.js';

/** The in-band error of a record that was not enriched because credits ran out. */
export const INSUFFICIENT_CREDITS =
  'Insufficient credits: the account has no enrichment credits left';

/** Options of the bulk generators: data options plus the credits that may be spent. */
export interface GenerateOptions extends Partial<ContactLookupOptions> {
  /** Credits available; enriched records beyond it come back with INSUFFICIENT_CREDITS. Default unlimited. */
  credits?: number;
  /** Echo `custom_fields` and `original_fields` on each record (bulk results). Default true. */
  echo?: boolean;
  /**
   * Leave out the contacts `business_email_exists` / `mobile_phone_exists` exclude instead of
   * answering them with a no-match record (bulk results: api-spec 4.1, "only contacts having a
   * work email are returned"). The single response must hold a contact, so it keeps the record.
   */
  leaveOutFiltered?: boolean;
}

/** Records and the credits they cost. */
export interface Generated<R> {
  records: R[];
  charged: number;
}

type WithCustom = { custom_fields?: unknown };

/** Copies the submitted input fields (not custom_fields) for `original_fields`. */
function originalFields(input: object, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const src = input as Record<string, unknown>;
  for (const f of fields) if (src[f] !== undefined) out[f] = src[f];
  return out;
}

/**
 * Enriches contacts in submission order, charging one credit per enriched record until
 * `credits` run out (the rest carry an in-band error). Pure: same inputs, same output.
 * Nested `company`/`location` objects are frozen and shared between records: copy before changing.
 */
export function generateContacts(
  inputs: readonly (ContactInput & WithCustom)[],
  o: GenerateOptions = {},
): Generated<ContactRecord> {
  const opts: ContactLookupOptions = {
    seed: o.seed ?? 1,
    mobile: o.mobile,
    requireEmail: o.requireEmail,
    requireMobile: o.requireMobile,
  };
  let left = o.credits ?? Infinity;
  let charged = 0;
  const echo = o.echo !== false;
  const records: ContactRecord[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i] as ContactInput & WithCustom;
    let rec: ContactRecord = lookupContact(input, opts);
    if (o.leaveOutFiltered && (rec.error === NO_EMAIL_MATCH || rec.error === NO_MOBILE_MATCH))
      continue;
    if (rec.credit_charged) {
      if (left >= 1) {
        left--;
        charged++;
      } else rec = emptyContact(INSUFFICIENT_CREDITS);
    }
    if (echo) {
      rec.original_fields = originalFields(input, CONTACT_INPUT_FIELDS);
      rec.custom_fields = input.custom_fields as Record<string, unknown>;
    }
    records.push(rec);
  }
  return { records, charged };
}

/** The identifying fields of a company (api-spec.md 4.2), as submitted. */
export interface CompanyInput {
  company_name?: string;
  company_website?: string;
}

/**
 * Enriches companies in submission order, `topMatches` records per input (each echoing
 * the input's custom_fields), one credit per enriched record while credits last.
 */
export function generateCompanies(
  inputs: readonly (CompanyInput & WithCustom)[],
  o: GenerateOptions & { topMatches?: number } = {},
): Generated<CompanyRecord> {
  const seed = o.seed ?? 1;
  const top = o.topMatches ?? 1;
  let left = o.credits ?? Infinity;
  let charged = 0;
  const echo = o.echo !== false;
  const records: CompanyRecord[] = [];
  for (const input of inputs) {
    const noMatch = isNoMatch([input.company_name, input.company_website]);
    const id = companyIdentity(input.company_website, input.company_name);
    for (let rank = 0; rank < (noMatch ? 1 : top); rank++) {
      let rec: CompanyRecord;
      if (noMatch) rec = { error: NO_MATCH, credit_charged: false, ...emptyCompanyProfile() };
      else if (left >= 1) {
        left--;
        charged++;
        rec = { error: '', credit_charged: true, ...companyProfile(id, seed, rank) };
      } else rec = { error: INSUFFICIENT_CREDITS, credit_charged: false, ...emptyCompanyProfile() };
      if (echo) {
        rec.original_fields = originalFields(input, COMPANY_INPUT_FIELDS);
        rec.custom_fields = input.custom_fields as Record<string, unknown>;
      }
      records.push(rec);
    }
  }
  return { records, charged };
}
