import { COMPANY_INPUT_FIELDS, CONTACT_INPUT_FIELDS } from '../../contract/limits.js';
import { EnrichError } from '../../errors.js';
import { nameStrength } from './column-synonyms.js';
import { mappingCoverageError } from './mapping-coverage.js';
import { nfc } from './normalize.js';
import type { ApiField, ColumnMapping, BulkKind } from './mapping-types.js';
import { shareOf, type ValueKind } from './value-kinds.js';
import type { RunWords } from '../types.js';
import { LIBRARY_WORDS } from '../words.js';

export type { ApiField, ColumnMapping, BulkKind } from './mapping-types.js';
export { loadMapping, mappingToJson, saveMapping } from './mapping-file.js';
export { mappingCoverageError } from './mapping-coverage.js';

/** Pseudo-field of `--map` and mapping files: one column holding the whole name, split into first/last. */
export const FULL_NAME = 'full_name';

export interface DetectOptions {
  /** false: use only the overrides (a `--mapping` file), detect nothing. */
  auto?: boolean;
  /** How the hints name the ways to map a column (the library's options by default). */
  words?: RunWords;
}

/** The fields a kind of input can map, in request order. */
export function fieldsOf(kind: BulkKind): readonly ApiField[] {
  return kind === 'contacts' ? CONTACT_INPUT_FIELDS : COMPANY_INPUT_FIELDS;
}

const EXPECTED: Record<string, (k: ValueKind) => boolean> = {
  business_email: (k) => k === 'email',
  company_domain: (k) => k === 'website',
  company_website: (k) => k === 'website',
  prof_network_url: (k) => k === 'person_profile',
};
const isText = (k: ValueKind) => k === 'text';

/**
 * Finds the column by its unique name, else case-insensitively; MAPPING_INVALID naming the columns
 * when absent. `field` is an input field (named in `words`) or an option's name (`--id-column`).
 */
export function resolveColumn(
  header: readonly string[],
  name: string,
  field: string,
  words: RunWords = LIBRARY_WORDS,
): number {
  // The name as written first: a header may hold "Société" in both forms, as two columns.
  if (header.includes(name)) return header.indexOf(name);
  // Else by the name's NFC, case and spaces around it: a mapping saved from a Windows export
  // ("Société", NFC) names the same column of a Mac one ("Société" with a combining accent).
  const fold = (s: string) => nfc(s.trim()).toLowerCase();
  const wanted = fold(name);
  const i = header.findIndex((h) => fold(h) === wanted);
  if (i >= 0) return i;
  const fields: readonly string[] = [...CONTACT_INPUT_FIELDS, ...COMPANY_INPUT_FIELDS, FULL_NAME];
  const isField = fields.includes(field);
  // A mapping file may have named the column: where the caller has one, re-creating it is a way out.
  const remap = words.mappingFile
    ? `, or re-create the mapping file with ${words.option('saveMapping')}`
    : '';
  throw new EnrichError(
    'MAPPING_INVALID',
    `${isField ? words.fieldName(field) : field} is mapped to column "${name}", which the input does not have; its columns are: ${header.map((h) => `"${h}"`).join(', ')}`,
    {
      location: { column: name },
      hint: isField
        ? `Fix the name with ${words.map(field, 'Column')}${remap}.`
        : `Give ${field} one of the columns above.`,
    },
  );
}

/** How well column `header` with these sample values fits `field` (0: not at all). */
function score(kind: BulkKind, field: string, header: string, samples: string[]): number {
  // A duplicate header ("Email (2)") scores as its original, so duplicates tie and are reported, never merged.
  const base = header.replace(/ \(\d+\)$/, '');
  let strength = nameStrength(kind, field, base);
  const expected = EXPECTED[field];
  const share = shareOf(samples, expected ?? isText);
  if (strength === 0) {
    // Values alone are enough for unmistakable kinds (an unnamed column full of emails).
    const distinctive = field === 'business_email' || field === 'prof_network_url';
    return distinctive && (share ?? 0) >= 0.8 ? 1 : 0;
  }
  if (share === undefined) return strength - 0.25;
  if (expected) {
    if (share < 0.5) return 0; // e.g. a company's profile URL is not the person's
    strength += 0.5;
  } else if (share < 0.3) return 0; // a "Name" column full of emails is not a name
  return strength;
}

/** Maps columns to API fields: overrides first, then header names and sample values; ambiguity is a usage error. */
export function detectMapping(
  kind: BulkKind,
  header: string[],
  samples: string[][],
  overrides: Record<string, string> = {},
  options: DetectOptions = {},
): ColumnMapping {
  const fields = fieldsOf(kind);
  const words = options.words ?? LIBRARY_WORDS;
  const mapping: ColumnMapping = { fields: {} };
  const taken = new Set<number>();
  const decided = new Set<string>();
  for (const [field, column] of Object.entries(overrides)) {
    if (
      !(fields as readonly string[]).includes(field) &&
      !(field === FULL_NAME && kind === 'contacts')
    ) {
      const known = [...fields, ...(kind === 'contacts' ? [FULL_NAME] : [])];
      throw new EnrichError(
        'MAPPING_INVALID',
        `unknown field "${field}" for ${kind}: expected one of ${known.map((f) => words.fieldName(f)).join(', ')}`,
      );
    }
    decided.add(field);
    if (column.trim() === '') continue; // mapped to nothing on purpose
    const col = resolveColumn(header, column, field, words);
    taken.add(col);
    if (field === FULL_NAME) mapping.split = { column: col };
    else mapping.fields[field as ApiField] = col;
  }
  if (mapping.split) decided.add('first_name').add('last_name');
  if (
    mapping.fields.first_name !== undefined &&
    mapping.fields.first_name === mapping.fields.last_name
  ) {
    mapping.split = { column: mapping.fields.first_name };
    delete mapping.fields.first_name;
    delete mapping.fields.last_name;
  }
  if (options.auto !== false) autoDetect(kind, header, samples, mapping, { taken, decided, words });
  const problem = mappingCoverageError(kind, mapping, (f) => words.fieldName(f));
  if (problem) {
    // A companies file given to `contacts` (or the other way round): say so first.
    const other = options.auto !== false && fitsOtherKind(kind, header, samples, words);
    throw new EnrichError(
      'MAPPING_INVALID',
      `${problem}; the input's columns are: ${header.map((h) => `"${h}"`).join(', ')}`,
      {
        hint: `${other ? `These columns look like a ${other} file: try ${words.kind(other)}. Or say` : 'Say'} which column holds what: ${words.map('field', 'Column')} for each field.`,
        ...(other ? { details: { fitsKind: other } } : {}),
      },
    );
  }
  return mapping;
}

/** The other kind, when its columns are detected well enough for its rows to be sent. */
function fitsOtherKind(
  kind: BulkKind,
  header: string[],
  samples: string[][],
  words: RunWords,
): BulkKind | undefined {
  const other: BulkKind = kind === 'contacts' ? 'companies' : 'contacts';
  const mapping: ColumnMapping = { fields: {} };
  const state = { taken: new Set<number>(), decided: new Set<string>(), words };
  try {
    autoDetect(other, header, samples, mapping, state);
  } catch {
    return undefined; // ambiguous for the other kind too: no suggestion
  }
  return mappingCoverageError(other, mapping) ? undefined : other;
}

function autoDetect(
  kind: BulkKind,
  header: string[],
  samples: string[][],
  mapping: ColumnMapping,
  { taken, decided, words }: { taken: Set<number>; decided: Set<string>; words: RunWords },
): void {
  const columnSamples = header.map((_, c) => samples.map((r) => r[c] ?? ''));
  // Scores do not change as columns are taken: compute each (field, column) once.
  const scores = new Map<string, number[]>();
  const scoreColumns = (field: string) => {
    const s = header.map((h, c) => score(kind, field, h, columnSamples[c]!));
    scores.set(field, s);
    return s;
  };
  const scoresOf = (field: string) => scores.get(field) ?? scoreColumns(field);
  const open = new Set<string>(fieldsOf(kind).filter((f) => !decided.has(f)));
  // Look for a full-name column only when nothing could be a first or last name column and none
  // was mapped by hand: a full name detected never stands beside first or last name columns.
  const nameColumns = ['first_name', 'last_name'].some((f) => scoresOf(f).some((s) => s > 0));
  if (
    kind === 'contacts' &&
    !nameColumns &&
    !['first_name', 'last_name', FULL_NAME].some((f) => decided.has(f))
  ) {
    open.add(FULL_NAME);
  }
  for (;;) {
    let pick: { field: string; ranked: { c: number; s: number }[] } | undefined;
    for (const field of open) {
      const ranked = header
        .map((_, c) => ({ c, s: taken.has(c) ? 0 : scoresOf(field)[c]! }))
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s);
      if (ranked.length && (!pick || ranked[0]!.s > pick.ranked[0]!.s)) pick = { field, ranked };
    }
    if (!pick) break;
    const [first, second] = pick.ranked;
    if (second && second.s === first!.s)
      throw ambiguous(
        pick.field,
        pick.ranked.filter((x) => x.s === first!.s).map((x) => header[x.c]!),
        words,
      );
    open.delete(pick.field);
    taken.add(first!.c);
    if (pick.field === FULL_NAME) mapping.split = { column: first!.c };
    else mapping.fields[pick.field as ApiField] = first!.c;
  }
}

function ambiguous(field: string, columns: string[], words: RunWords): EnrichError {
  const list = columns.map((c) => `"${c}"`).join(', ');
  return new EnrichError(
    'MAPPING_AMBIGUOUS',
    `cannot tell which column holds ${words.fieldName(field)}: ${list} all fit`,
    {
      hint: `Choose one, e.g. ${words.map(field, columns[0]!)} (or ${words.map(field, columns[1]!)})`,
      details: { field, candidates: columns },
    },
  );
}
