import { extname } from 'node:path';

/** The file formats read and written: the same four either way. */
export type FileFormat = 'csv' | 'tsv' | 'json' | 'jsonl';

/** The format a file name's extension names (`.tab` is TSV, `.ndjson` JSON Lines), if any. */
export function formatOfExtension(name: string): FileFormat | undefined {
  const ext = extname(name).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.tsv' || ext === '.tab') return 'tsv';
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  return undefined;
}

/** Format of an output path from its extension (CSV when unknown). */
export function formatOfPath(path: string): FileFormat {
  return formatOfExtension(path) ?? 'csv';
}
