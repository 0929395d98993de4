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

/**
 * What a results answer tells of the credits, read from its data: `dry` when it shows the
 * account dry (a record isCreditExhausted by its own `remainingCredits`); `unsure` when it does
 * not, and yet some record is not charged and has no data while its balance cannot be trusted
 * for the time the job ran (`balanceHeld` false). The spec ties `remaining_credits` to the
 * moment of the answer, not of the job: downloaded after a top-up (or an automatic refill, or
 * by another process than the one that saw the job sent), such a record may be one the job
 * skipped for credits as well as a no-match. Its rows are sent once more, and that answer tells.
 */
export function readCredits(
  records: readonly Readonly<Record<string, unknown>>[],
  remainingCredits: number | null | undefined,
  balanceHeld: boolean,
  costPerRecord = 1,
): { dry: boolean; unsure: boolean } {
  let skipped = false;
  for (const r of records) {
    if (isCreditExhausted(r, remainingCredits, costPerRecord)) return { dry: true, unsure: false };
    if (!skipped && isCreditExhausted(r, 0, costPerRecord)) skipped = true;
  }
  return { dry: false, unsure: skipped && !balanceHeld };
}
