/** What a cell looks like, for choosing between candidate columns. */
export type ValueKind = 'email' | 'person_profile' | 'company_profile' | 'website' | 'text';

const EMAIL = /^[^\s@<>(),;:]+@[^\s@<>(),;:]+\.[a-z]{2,}$/i;
// Professional-network profile URLs: a person's is /in/<slug> (or /pub/), a company's /company/<slug>
// (or, in Sales Navigator exports, /sales/company/<id>: a "companyUrl" column of those is no website).
const PERSON_PROFILE = /^(https?:\/\/)?([\w-]+\.)*[\w-]+\.[a-z]{2,}(:\d+)?\/(in|pub)\/[^\s/]+/i;
const COMPANY_PROFILE =
  /^(https?:\/\/)?([\w-]+\.)*[\w-]+\.[a-z]{2,}(:\d+)?\/(company|school|showcase|sales\/company)\/[^\s/]+/i;
const WEBSITE = /^(https?:\/\/)?([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?([/?#]\S*)?$/i;

/** Classifies one trimmed, non-empty value. */
export function valueKind(value: string): ValueKind {
  const v = value.trim();
  if (EMAIL.test(v)) return 'email';
  if (PERSON_PROFILE.test(v)) return 'person_profile';
  if (COMPANY_PROFILE.test(v)) return 'company_profile';
  if (WEBSITE.test(v)) return 'website';
  return 'text';
}

/** Share of the non-empty samples of a kind accepted by `accept` (undefined when all are empty). */
export function shareOf(
  samples: readonly string[],
  accept: (k: ValueKind) => boolean,
): number | undefined {
  const filled = samples.map((s) => s.trim()).filter((s) => s !== '');
  if (filled.length === 0) return undefined;
  return filled.filter((s) => accept(valueKind(s))).length / filled.length;
}
