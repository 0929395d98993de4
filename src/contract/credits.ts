/**
 * Credit exhaustion read from the answer's data (DESIGN.md section 5), never from its
 * wording: the spec promises only that such records carry an `error`, are not charged
 * and come with `remaining_credits`; the text of the error is the service's to choose.
 */

/** Fields of a record that are not enrichment data. */
const NOT_DATA = new Set([
  'error',
  'credit_charged',
  'original_fields',
  'custom_fields',
  'remaining_credits',
  // A verification answer echoes the address it was asked about.
  'email',
]);

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (typeof value === 'object' && !Array.isArray(value)) {
    return Object.values(value as Record<string, unknown>).every(isEmpty);
  }
  return false;
}

/** True when a record carries no enrichment data (only its error, flags and echoes). */
export function hasNoData(record: Readonly<Record<string, unknown>>): boolean {
  for (const [k, v] of Object.entries(record)) {
    if (!NOT_DATA.has(k) && !isEmpty(v)) return false;
  }
  return true;
}

/**
 * True when `record` was left out because credits ran out: not charged, no data, and
 * the answer's `remainingCredits` below what one record costs (`costPerRecord`, 1 for
 * every endpoint of api-spec.md), whatever its `error` says.
 */
export function isCreditExhausted(
  record: Readonly<Record<string, unknown>>,
  remainingCredits: number | null | undefined,
  costPerRecord = 1,
): boolean {
  if (typeof remainingCredits !== 'number' || !Number.isFinite(remainingCredits)) return false;
  return record.credit_charged !== true && remainingCredits < costPerRecord && hasNoData(record);
}
