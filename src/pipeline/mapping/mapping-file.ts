import { dirname } from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { EnrichError } from '../../errors.js';
import { writeFileAtomic } from '../../io/atomic-write.js';
import type { ColumnMapping, BulkKind } from './mapping-types.js';

const FIELD_ORDER = [
  'business_email',
  'company_domain',
  'company_name',
  'company_website',
  'first_name',
  'last_name',
  'prof_network_url',
];

/** The mapping as `field -> column name` (a split name column appears as first_name and last_name of one column). */
export function mappingToJson(
  mapping: ColumnMapping,
  header: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: [string, number][] = Object.entries(mapping.fields) as [string, number][];
  if (mapping.split)
    entries.push(['first_name', mapping.split.column], ['last_name', mapping.split.column]);
  entries.sort((a, b) => FIELD_ORDER.indexOf(a[0]) - FIELD_ORDER.indexOf(b[0]));
  for (const [field, col] of entries) out[field] = header[col] ?? '';
  return out;
}

/** Reads a `--mapping` file: a JSON object of field -> column name; anything else is MAPPING_INVALID. */
export async function loadMapping(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new EnrichError(
      'MAPPING_INVALID',
      `cannot read mapping file ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      { cause: err, location: { file: path } },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new EnrichError(
      'MAPPING_INVALID',
      `mapping file ${path} is not valid JSON: ${(err as Error).message}`,
      { cause: err, location: { file: path } },
    );
  }
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    !Object.values(value).every((v) => typeof v === 'string')
  ) {
    throw new EnrichError(
      'MAPPING_INVALID',
      `mapping file ${path}: expected a JSON object of field -> column name, e.g. {"business_email": "Email"}`,
      { location: { file: path } },
    );
  }
  return value as Record<string, string>;
}

/** Writes the mapping for `--mapping` to load later (so a changed header fails loudly instead of mapping silently). */
export async function saveMapping(
  path: string,
  _kind: BulkKind,
  mapping: ColumnMapping,
  header: readonly string[],
): Promise<void> {
  const text = `${JSON.stringify(mappingToJson(mapping, header), null, 2)}\n`;
  try {
    // Checked first: the atomic write would create its temp beside a directory and fail only at the rename.
    if ((await stat(path).catch(() => undefined))?.isDirectory())
      throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    await writeFileAtomic(path, text);
  } catch (err) {
    const missingDir = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new EnrichError('USAGE', `cannot write ${path}: ${whyUnwritable(err)}`, {
      cause: err,
      location: { file: path },
      ...(missingDir
        ? { hint: `Create it first (mkdir -p ${dirname(path)}) or write elsewhere.` }
        : {}),
    });
  }
}

/** Why a file could not be written, in words (the raw message names the temp file, not the user's). */
function whyUnwritable(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'its directory does not exist';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return (err as Error).message;
  }
}
