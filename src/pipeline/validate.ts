import { bulkCompanySchema, bulkContactSchema, Limits } from '../contract/index.js';
import type { InputRow } from '../io/read.js';
import type { ApiField, ColumnMapping, Kind } from './mapping-types.js';
import {
  normalizeDomain,
  normalizeEmail,
  normalizeText,
  normalizeWebsite,
  splitFullName,
} from './normalize.js';

export interface ValidateOptions {
  /** Column index of `--id-column`: its trimmed value is handed back as `id`. */
  idColumn?: number;
  /** Column names, to name the column of an error. */
  header?: readonly string[];
}

/** A row ready to send: normalised request fields (no custom_fields yet) and its dedupe key. */
export interface ValidRow {
  ok: true;
  fields: Partial<Record<ApiField, string>>;
  key: string;
  id?: string;
}

/** A row that is never sent, and the rule it broke. */
export interface InvalidRow {
  ok: false;
  error: string;
  column?: string;
}

const NORMALIZERS: Record<ApiField, (v: string) => string> = {
  business_email: normalizeEmail,
  company_domain: normalizeDomain,
  company_name: normalizeText,
  company_website: normalizeWebsite,
  first_name: normalizeText,
  last_name: normalizeText,
  prof_network_url: (v) => v.trim(),
};

/** Normalises a row's mapped cells and checks them with the API's own rules (the contract schemas). */
export function validateRow(
  kind: Kind,
  mapping: ColumnMapping,
  row: InputRow,
  options: ValidateOptions = {},
): ValidRow | InvalidRow {
  if (row.error) return { ok: false, error: row.error };
  const fields: Partial<Record<ApiField, string>> = {};
  const columnOf: Partial<Record<string, number>> = {};
  for (const [field, col] of Object.entries(mapping.fields) as [ApiField, number][]) {
    const value = NORMALIZERS[field](row.cells[col] ?? '');
    columnOf[field] = col;
    if (value !== '') fields[field] = value;
  }
  if (mapping.split) {
    const { first, last } = splitFullName(row.cells[mapping.split.column] ?? '');
    if (first) fields.first_name = first;
    if (last) fields.last_name = last;
    columnOf.first_name = columnOf.last_name = mapping.split.column;
  }
  const schema = kind === 'contacts' ? bulkContactSchema : bulkCompanySchema;
  const result = schema.safeParse({ ...fields, custom_fields: {} });
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = String(issue.path[0] ?? '');
    const value = fields[field as ApiField] ?? '';
    const error = !field
      ? issue.message
      : issue.code === 'too_big'
        ? `${field}: longer than ${Limits.fieldMaxLength} characters (got ${value.length})`
        : `${field}: ${issue.message}`;
    const col = columnOf[field];
    if (col === undefined) return { ok: false, error };
    return { ok: false, error, column: options.header?.[col] ?? `column ${col + 1}` };
  }
  const valid: ValidRow = { ok: true, fields, key: keyOfFields(kind, fields) };
  if (options.idColumn !== undefined) valid.id = (row.cells[options.idColumn] ?? '').trim();
  return valid;
}

const KEY_FIELDS: Record<Kind, readonly ApiField[]> = {
  contacts: [
    'business_email',
    'company_domain',
    'company_name',
    'first_name',
    'last_name',
    'prof_network_url',
  ],
  companies: ['company_name', 'company_website'],
};

/**
 * The canonical dedupe key of normalised fields (also of an `original_fields` echo):
 * case-folded, URLs without scheme, `www.` or trailing slash, so trivial variants of
 * one lookup are sent once.
 */
export function keyOfFields(kind: Kind, fields: Record<string, unknown>): string {
  const parts: string[] = [kind];
  for (const f of KEY_FIELDS[kind]) {
    const raw = fields[f];
    if (typeof raw !== 'string' || raw.trim() === '') continue;
    let v = normalizeText(raw).toLowerCase();
    if (f === 'prof_network_url' || f === 'company_website' || f === 'company_domain') {
      v = v
        .replace(/^[a-z]+:\/\//, '')
        .replace(/^www\d?\./, '')
        .replace(/\/+$/, '');
    }
    parts.push(`${f}=${v}`);
  }
  return parts.join('\u0001');
}
