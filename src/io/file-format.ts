import { extname } from 'node:path';

/** The file formats read and written. */
export type FileFormat = 'csv' | 'tsv' | 'json' | 'jsonl' | 'xlsx';

/** Every format, for messages and flag checks. */
export const FILE_FORMATS: readonly FileFormat[] = ['csv', 'tsv', 'json', 'jsonl', 'xlsx'];

/** True when the name ends in `.gz` (`leads.csv.gz`): the file is gzip-compressed. */
export function isGzipName(name: string): boolean {
  return extname(name).toLowerCase() === '.gz';
}

/** The name without a trailing `.gz`: `leads.csv.gz` -> `leads.csv`. */
function withoutGz(name: string): string {
  return isGzipName(name) ? name.slice(0, -3) : name;
}

/** The format a file name's extension names (`.tab` is TSV, `.ndjson` JSON Lines; `.csv.gz` is CSV), if any. */
export function formatOfExtension(name: string): FileFormat | undefined {
  const ext = extname(withoutGz(name)).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.tsv' || ext === '.tab') return 'tsv';
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.xlsx') return 'xlsx';
  return undefined;
}

/** Formats of data files people name outputs after, which this tool cannot write. */
const UNWRITABLE: Readonly<Record<string, string>> = {
  '.parquet': 'Parquet',
  '.xls': 'old Excel (.xls)',
  '.xlsm': 'macro-enabled Excel',
  '.xlsb': 'binary Excel',
  '.ods': 'OpenDocument spreadsheet',
  '.numbers': 'Apple Numbers',
  '.avro': 'Avro',
  '.orc': 'ORC',
  '.feather': 'Feather',
  '.arrow': 'Arrow',
  '.sqlite': 'SQLite',
  '.db': 'database',
  '.xml': 'XML',
  '.pdf': 'PDF',
  '.zip': 'ZIP',
  '.bz2': 'bzip2',
  '.xz': 'xz',
  '.zst': 'zstd',
  '.7z': '7-Zip',
};

/**
 * What an output name asks for that cannot be written (`out.parquet` -> "Parquet"; an
 * `.xlsx.gz` too: a workbook is already compressed), or undefined when it can be.
 */
export function unwritableFormatOf(name: string): string | undefined {
  const inner = extname(withoutGz(name)).toLowerCase();
  if (isGzipName(name) && inner === '.xlsx') return 'gzip-compressed Excel';
  return UNWRITABLE[inner];
}

/** Format of an output path from its extension (CSV when unknown). */
export function formatOfPath(path: string): FileFormat {
  return formatOfExtension(path) ?? 'csv';
}
