import type { Command } from 'commander';
import { action } from '../action.js';

const EXAMPLES = `
Examples:
  $ enrich cache stats
  $ enrich cache prune --older-than 14d
  $ enrich cache clear
  $ enrich cache clear --unfinished`;

/** Registers `enrich cache stats | prune | clear`: the results cache and run retention. */
export function registerCache(program: Command): void {
  const cache = program
    .command('cache')
    .description('the results cache (answers kept so no lookup is paid twice) and run retention');
  cache.addHelpText('after', EXAMPLES);
  cache
    .command('stats')
    .description('where the cache is, how many answers it holds and how old they are')
    .addHelpText('after', '\nExamples:\n  $ enrich cache stats\n  $ enrich cache stats --json')
    .action(
      action(async ({ globals }) => {
        const { cacheStats } = await import('./cache/run.js');
        await cacheStats(globals);
      }),
    );
  cache
    .command('prune')
    .description(
      'remove answers older than --older-than (default: setting cache_max_age) and finished runs past run_retention',
    )
    .option('--older-than <duration>', 'e.g. 7d, 12h (default: setting cache_max_age, 30d)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich cache prune\n  $ enrich cache prune --older-than 7d',
    )
    .action(
      action<{ olderThan?: string }>(async ({ options, globals }) => {
        const { cachePrune } = await import('./cache/run.js');
        await cachePrune(options.olderThan, globals);
      }),
    );
  cache
    .command('clear')
    .description(
      'erase every cached answer and every finished run (journals and downloaded results): no contact data is left',
    )
    .option(
      '--unfinished',
      'also erase runs not finished (their jobs are paid for: their rows are paid again)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich cache clear\n  $ enrich cache clear --unfinished',
    )
    .action(
      action<{ unfinished?: boolean }>(async ({ options, globals }) => {
        const { cacheClear } = await import('./cache/run.js');
        await cacheClear(globals, { unfinished: options.unfinished === true });
      }),
    );
}
