import type { Command } from 'commander';
import { action } from '../action.js';
import { addCacheOptions, type CacheFlags } from './single/cache-flags.js';

/** Registers `enrich verify-email <email>`: one real-time verification. */
export function registerVerifyEmail(program: Command): void {
  addCacheOptions(program.command('verify-email'))
    .description('verify one email address: prints valid, invalid or unknown first')
    .argument('<email>', 'the address to verify')
    .addHelpText(
      'after',
      `
The first line is valid, invalid or unknown; key/value details follow
(--json: the raw response), with the verification credits left.

Examples:
  $ enrich verify-email jane.doe@acme.com
  $ enrich verify-email jane.doe@acme.com --json
  $ enrich verify-email jane.doe@acme.com --sandbox | head -1
  $ enrich verify-email jane.doe@acme.com --refresh        # ask again, not the cache`,
    )
    .action(
      action<CacheFlags>(async ({ args, options, globals }) => {
        const { runVerifyEmail } = await import('./single/lookup.js');
        return runVerifyEmail(args[0] ?? '', globals, options);
      }),
    );
}
