import type { CompanyRecord, ContactRecord } from '../../contract/index.js';
import { COMPANY_RECORD_FIELDS } from '../../contract/limits.js';

import { STATUS_COLUMNS } from '../../io/write.js';

export { STATUS_COLUMNS };

export type Flat = string | number | boolean | null;

// DESIGN.md section 4: the contact record flattened with `_`, in this order.
const CONTACT_PATHS = [
  ['email'],
  ['office_phone'],
  ['mobile_phone'],
  ['first_name'],
  ['last_name'],
  ['title'],
  ['job_level'],
  ['department'],
  ['prof_network'],
  ['location', 'country'],
  ['location', 'state'],
  ['location', 'zip_code'],
  ['company', 'name'],
  ['company', 'description'],
  ['company', 'website'],
  ['company', 'employees_category'],
  ['company', 'revenue_category'],
  ['company', 'location', 'country'],
  ['company', 'location', 'state'],
  ['company', 'location', 'zip_code'],
] as const;

/** The enriched contact columns, e.g. `enriched_email` ... `enriched_company_location_zip_code`. */
export function contactColumns(prefix: string): string[] {
  return CONTACT_PATHS.map((p) => `${prefix}${p.join('_')}`);
}

/** The enriched company columns: every company record field, prefixed. */
export function companyColumns(prefix: string): string[] {
  return COMPANY_RECORD_FIELDS.map((f) => `${prefix}${f}`);
}

/** A value as a cell: scalars kept, anything else (objects the service added) as JSON text, missing as null. */
function flat(value: unknown): Flat {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return value;
  return JSON.stringify(value);
}

function at(record: unknown, path: readonly string[]): unknown {
  let v: unknown = record;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A contact record's values aligned to contactColumns. */
export function flattenContact(record: ContactRecord): Flat[] {
  return CONTACT_PATHS.map((p) => flat(at(record, p)));
}

/** A company record's values aligned to companyColumns. */
export function flattenCompany(record: CompanyRecord): Flat[] {
  return COMPANY_RECORD_FIELDS.map((f) => flat((record as Record<string, unknown>)[f]));
}

/** The names `--fields` takes: the record's fields flattened with `_`, without the prefix. */
export function fieldNames(kind: 'contacts' | 'companies'): string[] {
  return kind === 'contacts' ? contactColumns('') : companyColumns('');
}

/**
 * The enriched columns written and how a record fills them: every field, or only those
 * `fields` names (`--fields email,mobile_phone`), in the order given.
 */
export function enrichedColumns(
  kind: 'contacts' | 'companies',
  prefix: string,
  fields?: readonly string[],
): {
  columns: string[];
  flatten(record: Record<string, unknown>): Flat[];
  /** A record for JSON output: only the chosen fields (nested as in the record), plus its flags and echoes. */
  pick<T>(record: T): T;
} {
  const all = kind === 'contacts' ? flattenContact : flattenCompany;
  const full = (r: Record<string, unknown>) => all(r as never);
  const names = fieldNames(kind);
  if (!fields) return { columns: names.map((f) => prefix + f), flatten: full, pick: (r) => r };
  const index = fields.map((f) => names.indexOf(f));
  const paths = index.map((i) => (kind === 'contacts' ? CONTACT_PATHS[i]! : [names[i]!]));
  return {
    columns: fields.map((f) => prefix + f),
    flatten: (r) => {
      const values = full(r);
      return index.map((i) => values[i] ?? null);
    },
    pick: (r) => pickRecordPaths(r, paths),
  };
}

const KEPT = ['error', 'credit_charged', 'original_fields', 'custom_fields'];

/** The record (or each of an array's) with only `paths` of its data: `--fields` in JSON output. */
function pickRecordPaths<T>(value: T, paths: readonly (readonly string[])[]): T {
  if (Array.isArray(value)) return value.map((v: unknown) => pickRecordPaths(v, paths)) as T;
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of KEPT) if (k in record) out[k] = record[k];
  for (const path of paths) {
    const v = at(record, path);
    if (v === undefined) continue;
    let node = out;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = v;
  }
  return out as T;
}

/** Matches 2..N of `--top N` as numbered columns after the first's: `x_2`, `y_2`, `x_3`... */
export function numberedColumns(columns: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (let m = 2; m <= n; m++) for (const c of columns) out.push(`${c}_${m}`);
  return out;
}

/**
 * The columns a bulk run's output adds after the status columns. In a table (CSV, TSV, XLSX):
 * the match rank of `--explode`, the enriched fields, and without it the numbered ones of
 * matches 2..N (every paid match is kept); JSON carries every match in `records`.
 */
export function tableColumns(
  kind: 'contacts' | 'companies',
  o: {
    format: string;
    prefix: string;
    fields?: readonly string[] | undefined;
    matches?: number | undefined;
    explode: boolean;
  },
): { fieldColumns: string[]; more: string[]; extra: string[]; explode: boolean } {
  const table = o.format !== 'json' && o.format !== 'jsonl';
  const explode = o.explode && table;
  const fieldColumns = enrichedColumns(kind, o.prefix, o.fields).columns;
  const more = table && !explode ? numberedColumns(fieldColumns, o.matches ?? 1) : [];
  return {
    fieldColumns,
    more,
    extra: [...(explode ? ['enrich_match_rank'] : []), ...fieldColumns, ...more],
    explode,
  };
}

/** The columns a run of this tool adds besides the prefixed ones. */
const OWN_COLUMNS = new Set([...STATUS_COLUMNS, 'enrich_cached_at', 'enrich_match_rank']);

/**
 * Whether a column is one a bulk run with `prefix` writes: a record field's name, or its
 * numbered `_2`.. `_N` of `--top`. A column of the user's own that merely starts with the
 * prefix (`enriched_notes`) is not. A field whose own name ends in a number (`hq_address_1`)
 * is one as it is, not only with a number taken off.
 */
export function writtenByBulkRun(prefix: string): (column: string) => boolean {
  const fields = new Set([...contactColumns(''), ...companyColumns('')]);
  return (h) => {
    if (prefix === '' || !h.startsWith(prefix)) return false;
    const field = h.slice(prefix.length);
    return fields.has(field) || fields.has(field.replace(/_\d+$/, ''));
  };
}

/**
 * The columns of an earlier run's output in `header` (re-enriching an enriched file): the
 * `enrich_*` status columns and those `written` says that run wrote, only when
 * `enrich_status` is there.
 */
export function earlierOutputColumns(
  header: readonly string[],
  written: (column: string) => boolean,
): number[] {
  if (!header.includes('enrich_status')) return [];
  const out: number[] = [];
  header.forEach((h, i) => {
    if (OWN_COLUMNS.has(h) || written(h)) out.push(i);
  });
  return out;
}
