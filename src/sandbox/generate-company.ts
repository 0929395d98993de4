import type { CompanyRecord, COMPANY_RECORD_FIELDS } from '../contract/index.js';
import {
  AUDIENCES,
  COMPANY_SUFFIXES,
  COMPANY_WORDS,
  CURATED_LISTS,
  EMPLOYEE_RANGES,
  FUNDING_ROUNDS,
  INDUSTRIES,
  PLACES,
  REVENUE_RANGES,
} from './data-tables.js';
import { between, digits, fnv1a, pick } from './hash.js';
import { domainLabel, handle as handleOf, nameFromDomain, slug, toDomain } from './normalise.js';

/** What a company is known by: a domain, a name, or both (either may be ""). */
export interface CompanyIdentity {
  domain: string;
  name: string;
}

/** The company fields of api-spec.md 2.1, without error/credit_charged and the echoes. */
export type CompanyProfile = {
  [K in (typeof COMPANY_RECORD_FIELDS)[number]]: NonNullable<CompanyRecord[K]> | null;
};

/** Resolves a company identity from the website/domain and name a caller gave. */
export function companyIdentity(
  website: string | undefined,
  name: string | undefined,
): CompanyIdentity {
  const domain = website ? toDomain(website) : '';
  const trimmed = name?.trim() ?? '';
  return { domain, name: trimmed };
}

// Contacts of one company share its profile: a small cache spares regenerating it.
const cache = new Map<string, CompanyProfile>();
const CACHE_MAX = 4096;

/**
 * Generates the profile of a company: the same identity and seed always give the same
 * profile. The result may be shared: callers copy it before changing anything.
 */
export function companyProfile(id: CompanyIdentity, seed: number, rank = 0): CompanyProfile {
  const cacheKey = `${seed}\u0001${rank}\u0001${id.domain}\u0001${id.name}`;
  let p = cache.get(cacheKey);
  if (p === undefined) {
    if (cache.size >= CACHE_MAX) cache.clear();
    p = Object.freeze(buildProfile(id, seed, rank));
    cache.set(cacheKey, p);
  }
  return p;
}

function buildProfile(id: CompanyIdentity, seed: number, rank: number): CompanyProfile {
  const key = id.domain || id.name.toLowerCase();
  const h = fnv1a(rank === 0 ? key : `${key}#${rank}`, seed);
  let name = id.name || (id.domain ? nameFromDomain(id.domain) : '');
  if (!name) name = `${pick(COMPANY_WORDS, h, 1)} ${pick(COMPANY_SUFFIXES, h, 2)}`;
  // The handle of the name (a pseudo word for a name without Latin letters); a lesser
  // match adds its suffix to it, so every company keeps its own website and handles.
  let handle = handleOf(name);
  if (rank > 0) {
    const suffix = lesserSuffix(key, seed, rank);
    name = `${name} ${suffix}`;
    handle = slug(`${handle} ${suffix}`);
  }
  const website = rank === 0 && id.domain ? id.domain : `${domainLabel(handle)}.com`;
  const place = pick(PLACES, h, 4);
  const industry = pick(INDUSTRIES, h, 5);
  const size = between(h, 6, 0, EMPLOYEE_RANGES.length - 1);
  const emp = EMPLOYEE_RANGES[size] as (typeof EMPLOYEE_RANGES)[number];
  const rev = REVENUE_RANGES[size] as (typeof REVENUE_RANGES)[number];
  const year = between(h, 7, 1950, 2022);
  const fundingYear = Math.max(year, between(h, 8, 2015, 2025));
  return {
    website,
    name,
    phone: `${place[4]} ${digits(between(h, 9, 100, 9999), 4)}`,
    employees_category: emp[0],
    employees_number: between(h, 10, emp[1], emp[2]),
    revenue_category: rev[0],
    revenue_number: Math.round(between(h, 11, rev[1] / 1000, rev[2] / 1000) * 1000),
    sic_code: industry[1],
    naics_code: industry[2],
    industry: industry[0],
    prof_network: `https://profnet.example/company/${handle}`,
    social_a: `https://social-a.example/${handle}`,
    social_b: `https://social-b.example/${handle}`,
    video_channel: `https://video.example/@${handle}`,
    curated_lists: pick(CURATED_LISTS, h, 12),
    number_of_available_locations: 1 + (size === 0 ? 0 : between(h, 13, 0, size * 4)),
    description: `${name} ${industry[3]} ${pick(AUDIENCES, h, 14)} from ${place[2]}, ${place[1]}.`,
    year_founded: year,
    recent_funding_date: `${digits(between(h, 15, 1, 12), 2)}/${digits(between(h, 16, 1, 28), 2)}/${fundingYear}`,
    recent_funding_amount: between(h, 17, 5, 2000) * 100_000,
    recent_funding_round: pick(FUNDING_ROUNDS, h, 18),
    hq_address_1: `${between(h, 19, 1, 2500)} ${place[5]}`,
    hq_address_2: mixSuite(h),
    hq_city: place[2],
    hq_state: place[1],
    hq_zip_code: `${place[3]}${digits(between(h, 20, 0, 99), 2)}`,
    hq_country: place[0],
  };
}

/**
 * The suffix of the `rank`-th lesser match (1..9) of a company: each rank its own, so one
 * answer never holds the same company twice (`Acme Labs`, `Acme Group`, …, then `Acme Labs 2`
 * past the eight suffixes). Where the list starts follows the company and the seed.
 */
export function lesserSuffix(key: string, seed: number, rank: number): string {
  const n = COMPANY_SUFFIXES.length;
  const start = between(fnv1a(key, seed), 3, 0, n - 1);
  const suffix = COMPANY_SUFFIXES[(start + rank - 1) % n] as string;
  const round = Math.floor((rank - 1) / n);
  return round === 0 ? suffix : `${suffix} ${round + 1}`;
}

function mixSuite(h: number): string {
  const n = between(h, 21, 0, 9);
  return n < 4 ? '' : `Suite ${n * 100}`;
}

/** The profile of a company that was not found: strings "" and numbers null. */
export function emptyCompanyProfile(): CompanyProfile {
  return {
    website: '',
    name: '',
    phone: '',
    employees_category: '',
    employees_number: null,
    revenue_category: '',
    revenue_number: null,
    sic_code: null,
    naics_code: null,
    industry: '',
    prof_network: '',
    social_a: '',
    social_b: '',
    video_channel: '',
    curated_lists: '',
    number_of_available_locations: null,
    description: '',
    year_founded: null,
    recent_funding_date: '',
    recent_funding_amount: null,
    recent_funding_round: '',
    hq_address_1: '',
    hq_address_2: '',
    hq_city: '',
    hq_state: '',
    hq_zip_code: '',
    hq_country: '',
  };
}
