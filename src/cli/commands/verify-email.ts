import type { Command } from 'commander';
import { action } from '../action.js';

/** Registers `enrich verify-email <email>`: one real-time verification. */
export function registerVerifyEmail(program: Command): void {
  program
    .command('verify-email')
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
  $ enrich verify-email jane.doe@acme.com --sandbox | head -1`,
    )
    .action(
      action<object>(async ({ args, globals }) => {
        const { runVerifyEmail } = await import('./single/lookup.js');
        return runVerifyEmail(args[0] ?? '', globals);
      }),
    );
}
