import type { Command } from 'commander';
import { action } from '../action.js';
import { addCacheOptions, once } from './single/cache-flags.js';
import type { CompanyFlags } from './single/lookup.js';

/** Registers `enrich company`: one company (its best matches), enriched synchronously. */
export function registerCompany(program: Command): void {
  addCacheOptions(program.command('company'))
    .description('enrich one company by name and/or website')
    .option('--name <name>', 'company name (company_name)', once)
    .option('--website <url>', 'company website or domain (company_website)', once)
    .option('--top <n>', 'number of best matches to return, 1 to 10 (default 1)', once)
    .addHelpText(
      'after',
      `
Give --name, --website or both. Each match is printed as key/value lines
(--json: the raw response), then remaining_credits.

Examples:
  $ enrich company --website acme.com
  $ enrich company --name "Acme Corp" --top 3
  $ enrich company --website acme.com --json --sandbox
  $ enrich company --website acme.com --no-cache         # neither read nor keep an answer`,
    )
    .action(
      action<CompanyFlags>(async ({ options, globals }) => {
        const { runCompany } = await import('./single/lookup.js');
        return runCompany(options, globals);
      }),
    );
}
