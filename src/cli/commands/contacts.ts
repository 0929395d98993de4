import type { Command } from 'commander';
import { action } from '../action.js';
import { addBulkOptions } from './bulk/options.js';

/** Registers `enrich contacts <input|->`: bulk-enrich a file of contacts. */
export function registerContacts(program: Command): void {
  const cmd = program
    .command('contacts')
    .description('bulk-enrich a CSV/TSV/JSON/JSONL/XLSX file of contacts (or - for stdin)')
    .argument('<input>', 'input file, or - for stdin');
  addBulkOptions(cmd, 'contacts')
    .addHelpText(
      'after',
      `
Columns are mapped to the API fields business_email, company_domain, company_name,
first_name, last_name and prof_network_url from their names and values; a single
"Name" column is split into first and last name. Every row keeps all its columns
and gets enrich_status, enrich_error, enrich_credit_charged and enriched_* columns.

Examples:
  $ enrich contacts leads.csv --dry-run
  $ enrich contacts leads.csv -o enriched.csv
  $ enrich contacts export.csv --map business_email="Work Email" --save-mapping map.json --dry-run
  $ enrich contacts export.csv --mapping map.json -o enriched.csv --bom
  $ cat leads.jsonl | enrich contacts - --format jsonl --mobile > enriched.jsonl
  $ enrich contacts fixtures/contacts.csv --sandbox -o enriched.csv`,
    )
    .action(
      action<Record<string, unknown>>(async ({ args, options, globals }) => {
        const { normalizeBulkOptions } = await import('./bulk/options.js');
        const bulk = normalizeBulkOptions('contacts', options);
        const input = args[0] as string;
        if (bulk.dryRun) {
          const { runDryRun } = await import('./bulk/dry-run.js');
          return runDryRun('contacts', input, bulk, globals);
        }
        const { runBulkCommand } = await import('./bulk/run.js');
        return runBulkCommand('contacts', input, bulk, globals);
      }),
    );
}
