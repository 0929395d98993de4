import type { Command } from 'commander';
import { action } from '../action.js';
import { addCacheOptions, once } from './single/cache-flags.js';
import type { ContactFlags } from './single/lookup.js';

/** Registers `enrich contact`: one contact, enriched synchronously. */
export function registerContact(program: Command): void {
  addCacheOptions(program.command('contact'))
    .description('enrich one contact (charged when the service finds an email or phone)')
    .option('--email <address>', 'work email (business_email)', once)
    .option('--prof-network-url <url>', 'professional-network profile URL (prof_network_url)', once)
    .option('--first-name <name>', 'first name (with --last-name and a company)', once)
    .option('--last-name <name>', 'last name (with --first-name and a company)', once)
    .option('--company-domain <domain>', "employer's domain, e.g. acme.com", once)
    .option('--company-name <name>', "employer's name", once)
    .option('--mobile', 'add mobile phone numbers when available')
    .option('--require-email', 'return the contact only when it has a work email')
    .option(
      '--require-mobile',
      'return the contact only when it has a mobile phone (needs --mobile)',
    )
    .addHelpText(
      'after',
      `
Give at least one of: --prof-network-url; --email; --first-name --last-name
--company-domain; --first-name --last-name --company-name. Flags are checked
before anything is sent. The record is printed as key/value lines (--json: the
raw response), with remaining_credits.

Examples:
  $ enrich contact --email jane.doe@acme.com
  $ enrich contact --first-name Jane --last-name Doe --company-domain acme.com --mobile
  $ enrich contact --prof-network-url https://pn.example/in/janedoe --json
  $ enrich contact --email jane.doe@acme.com --sandbox
  $ enrich contact --email jane.doe@acme.com --max-age 7d   # a cached answer up to a week old`,
    )
    .action(
      action<ContactFlags>(async ({ options, globals }) => {
        const { runContact } = await import('./single/lookup.js');
        return runContact(options, globals);
      }),
    );
}
