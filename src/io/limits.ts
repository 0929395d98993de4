import { EnrichError } from '../errors.js';

/**
 * Longest record accepted, in characters, for CSV rows and JSON records alike: a quote
 * left open (or a 200 MB value) would otherwise be buffered whole.
 */
export const MAX_RECORD_CHARS = 8 * 1024 * 1024;

/** A NUL anywhere in the file: it is not text (README: "a NUL anywhere refuses the file"). */
export function nulError(file: string, line: number): EnrichError {
  return new EnrichError(
    'INPUT_UNREADABLE',
    `${file} is not a text file: it contains a NUL byte (at or after line ${line}); expected CSV, TSV, JSON or JSON Lines`,
    {
      location: { file, line },
      hint: 'Remove the NUL bytes (for example: tr -d "\\000" < in.csv > clean.csv) or export the file again.',
    },
  );
}
