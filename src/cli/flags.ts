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

/**
 * Refuses `--refresh` with `--no-cache`, for every command that has both (before a key is looked
 * for or anything is sent): one keeps the new answers, the other keeps nothing.
 */
export function refuseRefreshWithoutCache(raw: { refresh?: unknown; cache?: unknown }): void {
  if (raw.refresh === true && raw.cache === false)
    throw usageError('--refresh and --no-cache: choose one', {
      hint: '--refresh looks up again and keeps the new answers; --no-cache neither reads nor writes the cache.',
    });
}
