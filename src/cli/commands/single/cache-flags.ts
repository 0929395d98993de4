import type { Command } from 'commander';

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
