import { InvalidArgumentError, type Command } from 'commander';
import { parseTypedDuration } from '../../../config/duration.js';
import { refuseRefreshWithoutCache } from '../../flags.js';

/** The results-cache flags of the single commands (the bulk commands' own, same meaning). */
export interface CacheFlags {
  /** false with --no-cache: neither read nor write. */
  cache?: boolean;
  refresh?: boolean;
  maxAge?: string;
}

/** Declares --max-age, --refresh and --no-cache on a single command. */
export function addCacheOptions(cmd: Command): Command {
  return cmd
    .option(
      '--max-age <duration>',
      'use a cached answer younger than this, e.g. 7d, 12h (default: setting cache_max_age, 30d)',
    )
    .option('--refresh', 'look it up again (paying again) and keep the new answer')
    .option('--no-cache', 'neither read nor write the results cache');
}

/**
 * Refuses what the bulk commands refuse (before a key is looked for or anything is sent):
 * `--refresh` with `--no-cache` (one keeps the new answer, the other keeps nothing), and a
 * `--max-age` that is no duration.
 */
export function checkCacheFlags(flags: CacheFlags): void {
  refuseRefreshWithoutCache(flags);
  if (flags.maxAge !== undefined) parseTypedDuration(flags.maxAge, '--max-age');
}

/**
 * Option parser of a flag that names the one record to look up: given twice, the lookup is
 * refused rather than paying for the last value only, without a word.
 */
export function once(value: string, previous: string | undefined): string {
  if (previous !== undefined)
    throw new InvalidArgumentError(`given twice (also "${previous}"): give it once`);
  return value;
}
