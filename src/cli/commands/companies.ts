import type { Command } from 'commander';
import { action } from '../action.js';
import { addBulkOptions } from './bulk/options.js';

/** Registers `enrich companies <input|->`: bulk-enrich a file of companies. */
export function registerCompanies(program: Command): void {
  const cmd = program
    .command('companies')
    .description('bulk-enrich a CSV/TSV/JSON/JSONL/XLSX file of companies (or - for stdin)')
    .argument('<input>', 'input file, or - for stdin');
  addBulkOptions(cmd, 'companies')
    .addHelpText(
      'after',
      `
Columns are mapped to the API fields company_name and company_website from their
names and values. Every row keeps all its columns and gets enrich_status,
enrich_error, enrich_credit_charged and enriched_* columns (every company field);
with --explode, one row per match and enrich_match_rank.

Examples:
  $ enrich companies accounts.csv --dry-run
  $ enrich companies accounts.csv -o enriched.csv
  $ enrich companies accounts.csv --top 3 --explode -o matches.csv
  $ enrich companies crm.tsv --map company_website=Domain --dry-run --json
  $ enrich companies fixtures/companies.csv --sandbox -o enriched.csv`,
    )
    .action(
      action<Record<string, unknown>>(async ({ args, options, globals }) => {
        const { normalizeBulkOptions } = await import('./bulk/options.js');
        const bulk = normalizeBulkOptions('companies', options);
        const input = args[0] as string;
        if (bulk.dryRun) {
          const { runDryRun } = await import('./bulk/dry-run.js');
          return runDryRun('companies', input, bulk, globals);
        }
        const { runBulkCommand } = await import('./bulk/run.js');
        return runBulkCommand('companies', input, bulk, globals);
      }),
    );
}
