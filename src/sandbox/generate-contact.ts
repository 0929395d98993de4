import type { ContactRecord } from '../contract/index.js';
import { FIRST_NAMES, LAST_NAMES, PLACES, ROLES } from './data-tables.js';
import { between, digits, fnv1a, pick } from './hash.js';
import { companyIdentity, companyProfile } from './generate-company.js';
import { FREE_MAIL, hasMagic, isNoMatch, letters, nameFromDomain, toDomain } from './normalise.js';

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
export type ContactFields = Omit<ContactRecord, 'original_fields' | 'custom_fields'>;

export const NO_MATCH = 'No match found';
export const NO_EMAIL_MATCH = 'No match found: no contact with a business email';
export const NO_MOBILE_MATCH = 'No match found: no contact with a mobile phone';

/** Looks a contact up: an enriched record (credit_charged true) or a no-match record. */
export function lookupContact(input: ContactInput, o: ContactLookupOptions): ContactFields {
  const values = [
    input.business_email,
    input.company_domain,
    input.company_name,
    input.first_name,
    input.last_name,
    input.prof_network_url,
  ];
  if (isNoMatch(values)) return emptyContact(NO_MATCH);
  const noEmail = hasMagic(values, 'noemail');
  const noMobile = hasMagic(values, 'nomobile');
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

  const local = at > 0 ? email.slice(0, at).split(/[._-]/) : [];
  const first =
    input.first_name?.trim() ||
    capital(local.length > 1 ? local[0] : '') ||
    pick(FIRST_NAMES, h, 1);
  const last =
    input.last_name?.trim() || capital(local.length > 1 ? local[1] : '') || pick(LAST_NAMES, h, 2);
  const company = companyProfile(
    companyIdentity(
      domain || undefined,
      input.company_name ?? (domain ? nameFromDomain(domain) : ''),
    ),
    o.seed,
  );
  const role = pick(ROLES, h, 3);
  const place = pick(PLACES, h, 4);
  const workEmail = noEmail ? '' : email || `${letters(first)}.${letters(last)}@${company.website}`;
  const mobile = o.mobile && !noMobile ? `${place[4]} ${digits(between(h, 5, 100, 9999), 4)}` : '';
  return {
    error: '',
    credit_charged: true,
    first_name: first,
    last_name: last,
    email: workEmail,
    office_phone: `${company.phone}`,
    mobile_phone: mobile,
    location: {
      country: place[0],
      state: place[1],
      zip_code: `${place[3]}${digits(between(h, 6, 0, 99), 2)}`,
    },
    title: role[0],
    job_level: role[1],
    department: role[2],
    prof_network:
      input.prof_network_url?.trim() ||
      `https://profnet.example/in/${letters(first)}-${letters(last)}-${(h & 0xffff).toString(16)}`,
    company: {
      name: company.name ?? '',
      description: company.description ?? '',
      website: company.website ?? '',
      employees_category: company.employees_category ?? '',
      revenue_category: company.revenue_category ?? '',
      location: {
        country: company.hq_country ?? '',
        state: company.hq_state ?? '',
        zip_code: company.hq_zip_code ?? '',
      },
    },
  };
}

function capital(word: string | undefined): string {
  if (!word || !/^[a-z]+$/i.test(word)) return '';
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
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
