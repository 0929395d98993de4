import { EnrichError } from '../errors.js';
import type { InputSource } from '../io/read.js';
import { FULL_NAME } from '../pipeline/mapping/map-columns.js';
import { resolveMapping } from '../pipeline/mapping/resolve-mapping.js';
import type { RunWords } from '../pipeline/types.js';

/** The contact fields other than the email: left unmapped, so only the email column is looked for. */
const OTHER_FIELDS = [
  'first_name',
  'last_name',
  'company_domain',
  'company_name',
  'prof_network_url',
  FULL_NAME,
];

/**
 * How verify-emails' words name the contacts mapping it borrows: it maps one column, the email
 * (`--map email=…`, never the contacts field `business_email`), and has no mapping file to
 * re-create (no `--save-mapping`).
 */
export const EMAIL_COLUMN_WORDS: Pick<RunWords, 'fieldName' | 'mappingFile'> = {
  fieldName: (field) => (field === 'business_email' ? 'email' : field),
  mappingFile: false,
};

/**
 * The column holding the addresses: the one named (`--map email=Col`), else the one the
 * contacts mapping detects as `business_email` (by its name and its values). Only the email
 * is looked for, so a file whose name columns are ambiguous still verifies.
 */
export async function resolveEmailColumn(
  source: InputSource,
  named: string | undefined,
  words: RunWords,
): Promise<{ column: number; name: string }> {
  if (named !== undefined && named.trim() === '') throw noColumnNamed(named, words);
  const map: Record<string, string> = Object.fromEntries(OTHER_FIELDS.map((f) => [f, '']));
  if (named !== undefined) map.business_email = named;
  let column: number | undefined;
  try {
    const mapped = await resolveMapping(source, { kind: 'contacts', map, words });
    column = mapped.mapping.fields.business_email;
  } catch (err) {
    // Coverage: no column passed as an email. Said below, in this command's words.
    if (!(err instanceof EnrichError) || err.code !== 'MAPPING_INVALID' || named !== undefined)
      throw err;
  }
  if (column === undefined && !(await holdsRows(source))) {
    // A list with nothing in it (`[]`, an empty JSON Lines file, a header alone): nothing is
    // sent, so no email column is no error, as for the bulk commands: cron gets its empty output.
    return { column: -1, name: named ?? '' };
  }
  if (column === undefined) {
    const columns = source.header.map((h) => `"${h}"`).join(', ');
    throw new EnrichError(
      'MAPPING_INVALID',
      `no column of ${source.name} holds email addresses; its columns are: ${columns || '(none)'}`,
      {
        location: { file: source.name },
        hint: `Say which column holds them: ${words.map('email', source.header[0] ?? 'Email')}.`,
      },
    );
  }
  return { column, name: source.header[column] ?? String(column) };
}

/**
 * An email column named as nothing: for `contacts` an empty column unmaps a field, but this
 * command reads one column, so it would be left with none (and told so in contacts' words).
 */
function noColumnNamed(named: string, words: RunWords): EnrichError {
  const option = words.option('emailColumn');
  return new EnrichError(
    'USAGE',
    `${option}: expected the name of the column holding the addresses, got ${JSON.stringify(named)}`,
    {
      hint: `Name the column as the header row spells it, e.g. ${words.map('email', 'Work Email')}, or leave ${option} out: the column is then found by its name and values.`,
    },
  );
}

/** Whether the input has a row below its header (the first pass stops at the first). */
async function holdsRows(source: InputSource): Promise<boolean> {
  for await (const row of source.rows()) {
    void row;
    return true;
  }
  return false;
}
