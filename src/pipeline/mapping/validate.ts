import {
  charLength,
  COMPANY_INPUT_FIELDS,
  CONTACT_INPUT_FIELDS,
  Limits,
} from '../../contract/limits.js';
import { companyCombinationError, contactCombinationError } from '../../contract/rules.js';
import { emailProblem } from '../../contract/email.js';
import type { InputRow } from '../../io/read.js';
import type { ApiField, ColumnMapping, BulkKind } from './mapping-types.js';
import {
  nfc,
  normalizeDomain,
  normalizeEmail,
  normalizeText,
  normalizeWebsite,
  siteProblem,
  splitFullName,
} from './normalize.js';

export interface ValidateOptions {
  /** Column names, to name the column of an error. */
  header?: readonly string[];
}

/** A row ready to send: normalised request fields (no custom_fields yet) and its dedupe key. */
export interface ValidRow {
  ok: true;
  fields: Partial<Record<ApiField, string>>;
  key: string;
}

/** A row that is never sent, and the rule it broke. */
export interface InvalidRow {
  ok: false;
  error: string;
  column?: string;
}

/** Each field's normalisation, after NFC (`nfc`: one regex test for most values). */
const NORMALIZERS: Record<ApiField, (v: string) => string> = {
  business_email: (v) => normalizeEmail(nfc(v)),
  company_domain: (v) => normalizeDomain(nfc(v)),
  company_name: (v) => normalizeText(nfc(v)),
  company_website: (v) => normalizeWebsite(nfc(v)),
  first_name: (v) => normalizeText(nfc(v)),
  last_name: (v) => normalizeText(nfc(v)),
  prof_network_url: (v) => nfc(v).trim(),
};

/** A mapping's fields with their columns and normalisers: made once per mapping (a mapping is not changed once resolved), not per row. */
const plans = new WeakMap<ColumnMapping, [ApiField, number, (v: string) => string][]>();
function planOf(mapping: ColumnMapping): [ApiField, number, (v: string) => string][] {
  let plan = plans.get(mapping);
  // Stryker disable next-line ConditionalExpression: a plan made again for every row is the same plan (only slower)
  if (!plan) {
    plan = (Object.entries(mapping.fields) as [ApiField, number][]).map(([f, col]) => [
      f,
      col,
      NORMALIZERS[f],
    ]);
    plans.set(mapping, plan);
  }
  return plan;
}

/** The column a field came from, to name it in an error (a split full name gives both names). */
function columnOf(mapping: ColumnMapping, field: ApiField): number | undefined {
  return mapping.split && (field === 'first_name' || field === 'last_name')
    ? mapping.split.column
    : mapping.fields[field];
}

/** Normalises a row's mapped cells and checks them with the API's own rules (the contract schemas). */
export function validateRow(
  kind: BulkKind,
  mapping: ColumnMapping,
  row: InputRow,
  options: ValidateOptions = {},
): ValidRow | InvalidRow {
  if (row.error) return { ok: false, error: row.error };
  const fields: Partial<Record<ApiField, string>> = {};
  for (const [field, col, normalize] of planOf(mapping)) {
    // A JSON object or array is no name or address: left out (nestedNote says so).
    if (row.nested?.[col]) continue;
    const value = normalize(row.cells[col] ?? '');
    if (value !== '') fields[field] = value;
  }
  if (mapping.split && !row.nested?.[mapping.split.column]) {
    const { first, last } = splitFullName(nfc(row.cells[mapping.split.column] ?? ''));
    if (first) fields.first_name = first;
    if (last) fields.last_name = last;
  }
  // The API's rules (api-spec.md 4.1/4.3/4.4) checked by hand: this runs once per row, and zod's
  // safeParse cost more than the parsing itself. A property test holds it equal to the schemas.
  const tooLong = checkedFields(kind).find(
    (f) => charLength(fields[f] ?? '') > Limits.fieldMaxLength,
  );
  if (tooLong) {
    const error = `${tooLong}: longer than ${Limits.fieldMaxLength} characters (got ${charLength(fields[tooLong]!)})`;
    const col = columnOf(mapping, tooLong);
    // Stryker disable next-line ConditionalExpression: every checked field came from a mapped column, so col is always known
    return col === undefined
      ? // Stryker disable next-line ObjectLiteral,BooleanLiteral: never taken (above)
        { ok: false, error }
      : { ok: false, error, column: options.header?.[col] ?? `column ${col + 1}` };
  }
  // A value plainly not what its field takes (`bad@`, `n/a` as a domain) would pay for a lookup
  // that cannot be right: the row goes without it when it holds another complete combination
  // (the output says so: leftOutNote), else it is invalid, named by the first such field.
  let bad: { field: ApiField; error: string } | undefined;
  for (const [field, what, problem] of LEFT_OUT) {
    const value = fields[field];
    const why = value === undefined ? undefined : problem(value);
    if (why === undefined) continue;
    delete fields[field];
    bad ??= { field, error: `${field}: ${what} (${why})` };
  }
  const rule =
    kind === 'contacts' ? contactCombinationError(fields) : companyCombinationError(fields);
  if (rule && bad) {
    const col = columnOf(mapping, bad.field);
    return {
      ok: false,
      error: bad.error,
      // Stryker disable next-line ConditionalExpression: the value came from a mapped column, so col is always known
      ...(col === undefined ? {} : { column: options.header?.[col] ?? `column ${col + 1}` }),
    };
  }
  if (rule) {
    const nested = row.nested && nestedFields(mapping, row)[0];
    if (!nested) return { ok: false, error: rule };
    return { ok: false, error: `${leftOut(nested, options.header)}; ${rule}` };
  }
  // Stryker disable next-line BooleanLiteral: the fields are NFC already (nfc above), so NFC again keys the same, only slower
  return { ok: true, fields, key: canonicalKey(kind, fields, false) };
}

/** The mapped fields of `row` whose cell holds a JSON object or array, with their columns. */
function nestedFields(mapping: ColumnMapping, row: InputRow): { field: string; col: number }[] {
  const found: { field: string; col: number }[] = [];
  // Stryker disable next-line OptionalChaining: called only for a row with nested cells
  for (const [field, col] of planOf(mapping)) if (row.nested?.[col]) found.push({ field, col });
  // Stryker disable next-line OptionalChaining: called only for a row with nested cells
  if (mapping.split && row.nested?.[mapping.split.column])
    found.push({ field: 'first_name/last_name', col: mapping.split.column });
  return found;
}

/** `company_name left out (column "company" holds a JSON object or array, not text)`. */
function leftOut(n: { field: string; col: number }, header: readonly string[] | undefined): string {
  const name = header?.[n.col] ?? `column ${n.col + 1}`;
  return `${n.field} left out (column "${name}" holds a JSON object or array, not text)`;
}

/** The fields a plainly wrong value is left out of (what it is not, and why not). */
type LeftOutCheck = readonly [ApiField, string, (normalized: string) => string | undefined];
const LEFT_OUT: readonly LeftOutCheck[] = [
  ['business_email', 'not an email address', emailProblem],
  ['company_domain', 'not a domain name', (v) => siteProblem('domain', v)],
  // Stryker disable next-line StringLiteral: siteProblem reads every kind but 'domain' as 'url'
  ['company_website', 'not a website', (v) => siteProblem('url', v)],
  // Stryker disable next-line StringLiteral: siteProblem reads every kind but 'domain' as 'url'
  ['prof_network_url', 'not a profile URL', (v) => siteProblem('url', v)],
];

/**
 * What a row sent without some of its mapped fields says in `enrich_error`: a JSON object or
 * array in a mapped column, a value its field does not take (`badFieldNote`); undefined when
 * the row was sent whole.
 */
export function leftOutNote(
  mapping: ColumnMapping,
  row: InputRow,
  header?: readonly string[],
): string | undefined {
  let notes: string[] | undefined;
  // Stryker disable next-line ConditionalExpression: a row without nested cells has none to note (this only saves the look)
  if (row.nested)
    notes = nestedFields(mapping, row).map((n) => `${leftOut(n, header)}; sent without it`);
  for (const check of LEFT_OUT) {
    const note = badFieldNote(mapping, row, check);
    if (note) (notes ??= []).push(note);
  }
  return notes && notes.length > 0 ? notes.join('; ') : undefined;
}

/**
 * Why one value of `field` is plainly not what the field takes (`not a domain name: it contains
 * a space`), by the rule a bulk row is sent without it; undefined when it passes. The single
 * lookups refuse such a flag, as a lookup by it would still be charged.
 */
export function fieldValueProblem(field: ApiField, raw: string): string | undefined {
  const check = LEFT_OUT.find(([f]) => f === field);
  if (!check) return undefined;
  const value = NORMALIZERS[field](raw);
  const why = value === '' ? undefined : check[2](value);
  return why && `${check[1]} (${why})`;
}

/** `company_domain left out (not a domain name: it contains a space); sent without it`, when so. */
function badFieldNote(
  mapping: ColumnMapping,
  row: InputRow,
  [field, what, problem]: LeftOutCheck,
): string | undefined {
  const col = mapping.fields[field];
  // Stryker disable next-line ConditionalExpression: an unmapped column reads as '' below, which has no problem either
  if (col === undefined || row.nested?.[col]) return undefined;
  const value = NORMALIZERS[field](row.cells[col] ?? '');
  const why = value === '' ? undefined : problem(value);
  return why && `${field} left out (${what}: ${why}); sent without it`;
}

/**
 * What a contact row sent without its email says in `enrich_error`: the address failed the
 * email rule, and another complete combination of the row was sent instead (validateRow).
 */
export function emailNote(mapping: ColumnMapping, row: InputRow): string | undefined {
  return badFieldNote(mapping, row, LEFT_OUT[0]!);
}

/** Fields with the 255 limit: every contact field; for companies only company_name (website is unbounded). */
const checkedFields = (kind: BulkKind): readonly ApiField[] =>
  // Stryker disable next-line ConditionalExpression: company rows hold none of the other contact fields, so checking them changes nothing
  kind === 'contacts' ? KEY_FIELDS.contacts : ['company_name'];

const KEY_FIELDS: Record<BulkKind, readonly ApiField[]> = {
  contacts: CONTACT_INPUT_FIELDS,
  companies: COMPANY_INPUT_FIELDS,
};

/**
 * The canonical dedupe key of normalised fields (also of an `original_fields` echo):
 * NFC, case-folded, URLs without scheme, `www.` or trailing slash, so trivial variants of
 * one lookup are sent once. (validateRow's fields are NFC already; an echo of a request an
 * earlier version sent may not be, and keys the same.)
 */
export function keyOfFields(kind: BulkKind, fields: Record<string, unknown>): string {
  return canonicalKey(kind, fields, true);
}

/** keyOfFields; `toNfc` false for validateRow's fields, NFC already (a regex test a field saved). */
function canonicalKey(kind: BulkKind, fields: Record<string, unknown>, toNfc: boolean): string {
  let key: string = kind;
  for (const f of KEY_FIELDS[kind]) {
    const raw = fields[f];
    if (typeof raw !== 'string') continue;
    let v = normalizeText(toNfc ? nfc(raw) : raw);
    if (v === '') continue;
    v = v.toLowerCase();
    if (f === 'prof_network_url' || f === 'company_website' || f === 'company_domain') {
      v = v
        .replace(/^[a-z]+:\/\//, '')
        .replace(/^www\d?\./, '')
        .replace(/\/+$/, '');
    }
    key += `\u0001${f}=${v}`;
  }
  return key;
}
