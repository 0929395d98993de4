import { parseInteger } from '../config/settings-table.js';
import { usageError } from '../errors.js';

/** Parses an integer flag in [min, max] (the tool's one integer parser), or throws a usage error naming the flag. */
export function parseIntegerFlag(
  flag: string,
  text: unknown,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  try {
    return parseInteger(text, min, max);
  } catch (err) {
    throw usageError(`${flag}: ${(err as Error).message}`);
  }
}
