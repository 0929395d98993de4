import type { ContactRecord } from '../contract/index.js';
import {
  COMPANY_SUFFIXES,
  COMPANY_WORDS,
  FIRST_NAMES,
  LAST_NAMES,
  PLACES,
  ROLES,
} from './data-tables.js';
import { between, digits, fnv1a, pick } from './hash.js';
import { namesOfLocalPart } from './email-names.js';
import { companyProfile, type CompanyProfile } from './generate-company.js';
import { FREE_MAIL, MAGIC, localWord, toDomain } from './normalise.js';

/** The identifying fields of a contact (api-spec.md 4.1), as submitted. */
export interface ContactInput {
  business_email?: string;
  company_domain?: string;
  company_name?: string;
  first_name?: string;
  last_name?: string;
  prof_network_url?: string;
}

/** The metadata options that change what a contact lookup returns. */
export interface ContactLookupOptions {
  seed: number;
  /** metadata.mobile_phone_enrichment */
  mobile?: boolean;
  /** metadata.business_email_exists: no match unless the contact has a work email. */
  requireEmail?: boolean;
  /** metadata.mobile_phone_exists: no match unless the contact has a mobile phone. */
  requireMobile?: boolean;
}

/** The contact fields of api-spec.md 2.2 without the bulk echoes. */
export type ContactFields = Pick<
  ContactRecord,
  | 'error'
  | 'credit_charged'
  | 'first_name'
  | 'last_name'
  | 'email'
  | 'office_phone'
  | 'mobile_phone'
  | 'location'
  | 'title'
  | 'job_level'
  | 'department'
  | 'prof_network'
  | 'company'
>;

export const NO_MATCH = 'No match found';
export const NO_EMAIL_MATCH = 'No match found: no contact with a business email';
export const NO_MOBILE_MATCH = 'No match found: no contact with a mobile phone';

/** Looks a contact up: an enriched record (credit_charged true) or a no-match record. */
export function lookupContact(input: ContactInput, o: ContactLookupOptions): ContactFields {
  // One lower-cased string of every field: the magic words are looked up once each.
  const all =
    `${input.business_email ?? ''}\u0001${input.company_domain ?? ''}\u0001${input.company_name ?? ''}\u0001` +
    `${input.first_name ?? ''}\u0001${input.last_name ?? ''}\u0001${input.prof_network_url ?? ''}`;
  const lower = all.toLowerCase();
  if (lower.includes(MAGIC.noMatch)) return emptyContact(NO_MATCH);
  const noEmail = lower.includes(MAGIC.noEmail);
  const noMobile = lower.includes(MAGIC.noMobile);
  if (o.requireEmail && noEmail) return emptyContact(NO_EMAIL_MATCH);
  if (o.requireMobile && noMobile) return emptyContact(NO_MOBILE_MATCH);

  const email = input.business_email?.trim().toLowerCase() ?? '';
  const at = email.indexOf('@');
  const emailDomain = at > 0 ? email.slice(at + 1) : '';
  const domain = input.company_domain
    ? toDomain(input.company_domain)
    : emailDomain && !FREE_MAIL.has(emailDomain)
      ? emailDomain
      : '';
  // The person's identity: the profile URL or email when given, else name at company.
  const key =
    input.prof_network_url?.trim().toLowerCase() ||
    email ||
    `${input.first_name ?? ''}|${input.last_name ?? ''}|${domain || (input.company_name ?? '').toLowerCase()}`.toLowerCase();
  const h = fnv1a(key, o.seed);

  // The name the address reads as (`ana@` is Ana), so the answer agrees with the question.
  const said = at > 0 ? namesOfLocalPart(email.slice(0, at)) : {};
  const first = input.first_name?.trim() || said.first || pick(FIRST_NAMES, h, 1);
  const last = input.last_name?.trim() || said.last || pick(LAST_NAMES, h, 2);
  const company = companyProfile(
    // Without a company name the profile derives one from the domain; with neither,
    // the person's own hash picks the employer.
    {
      domain,
      name:
        input.company_name?.trim() ||
        (domain ? '' : `${pick(COMPANY_WORDS, h, 7)} ${pick(COMPANY_SUFFIXES, h, 8)}`),
    },
    o.seed,
  );
  const role = pick(ROLES, h, 3);
  const place = pick(PLACES, h, 4);
  // Latin letters of the names, or a pseudo word for a name without any (`李`).
  const lf = localWord(first);
  const ll = localWord(last);
  const workEmail = noEmail ? '' : email || `${emailLocal(lf, ll)}@${company.website}`;
  const mobile = o.mobile && !noMobile ? `${place[4]} ${digits(between(h, 5, 100, 9999), 4)}` : '';
  return {
    error: '',
    credit_charged: true,
    first_name: first,
    last_name: last,
    email: workEmail,
    office_phone: `${company.phone}`,
    mobile_phone: mobile,
    location: contactLocation(place, between(h, 6, 0, 99)),
    title: role[0],
    job_level: role[1],
    department: role[2],
    prof_network:
      input.prof_network_url?.trim() ||
      `https://profnet.example/in/${lf}-${ll}-${(h & 0xffff).toString(16)}`,
    company: companySummary(company),
  };
}

// Records are read-only data: contacts of one company share one frozen summary, and
// locations come from a small frozen table, which keeps bulk generation light on the GC.
const summaries = new WeakMap<CompanyProfile, ContactRecord['company']>();

function companySummary(p: CompanyProfile): ContactRecord['company'] {
  let s = summaries.get(p);
  if (s === undefined) {
    const summary: ContactRecord['company'] = {
      name: p.name ?? '',
      description: p.description ?? '',
      website: p.website ?? '',
      employees_category: p.employees_category ?? '',
      revenue_category: p.revenue_category ?? '',
      location: Object.freeze({
        country: p.hq_country ?? '',
        state: p.hq_state ?? '',
        zip_code: p.hq_zip_code ?? '',
      }),
    };
    s = Object.freeze(summary);
    summaries.set(p, s);
  }
  return s;
}

const locations = new Map<string, ContactRecord['location']>();

function contactLocation(place: (typeof PLACES)[number], zip: number): ContactRecord['location'] {
  const key = `${place[2]}${zip}`;
  let l = locations.get(key);
  if (l === undefined) {
    l = Object.freeze({
      country: place[0],
      state: place[1],
      zip_code: `${place[3]}${digits(zip, 2)}`,
    });
    locations.set(key, l);
  }
  return l;
}

/** `first.last`, cut to the 64 characters a local part may hold (RFC 5321). */
function emailLocal(first: string, last: string): string {
  if (first.length + last.length < 64) return `${first}.${last}`;
  const f = first.slice(0, 32);
  return `${f}.${last.slice(0, 63 - f.length)}`;
}

/** A contact record that was not enriched: `error` says why, strings "", nothing charged. */
export function emptyContact(error: string): ContactFields {
  return {
    error,
    credit_charged: false,
    first_name: '',
    last_name: '',
    email: '',
    office_phone: '',
    mobile_phone: '',
    location: { country: '', state: '', zip_code: '' },
    title: '',
    job_level: '',
    department: '',
    prof_network: '',
    company: {
      name: '',
      description: '',
      website: '',
      employees_category: '',
      revenue_category: '',
      location: { country: '', state: '', zip_code: '' },
    },
  };
}
