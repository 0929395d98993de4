import type { Command } from 'commander';
import { action } from '../action.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Registers `enrich verify-emails <input|->`: verify every distinct address of a file. */
const SHEET_HELP =
  'the worksheet of an .xlsx input, by name (a hidden one too) or by number among the visible tabs; a sheet named so wins over a position (default: the first visible)';

export function registerVerifyEmails(program: Command): void {
  program
    .command('verify-emails')
    .description(
      'verify every distinct email address of a CSV/TSV/JSON/JSONL/XLSX file (or - for stdin)',
    )
    .argument('<input>', 'input file, or - for stdin')
    .option('-o, --output <file>', 'write the verified file here (default: stdout)')
    .option(
      '--format <format>',
      'output format: csv, tsv, json, jsonl, xlsx (default: from -o, else the input format, CSV for a workbook)',
    )
    .option('--map <email=Column>', 'the column holding the addresses (default: detected)', collect)
    .option('--concurrency <n>', 'verifications in flight at once, 1..64 (default: 8)')
    .option('--rate-limit <req/s>', 'at most this many requests per second (setting rate_limit)')
    .option(
      '--dry-run',
      'send nothing: show the column, the distinct addresses and the worst-case credits',
    )
    .option(
      '--max-credits <n>',
      'send at most n verifications (one verification credit each at worst)',
    )
    .option(
      '--timeout <duration>',
      'stop sending after this long, e.g. 30m, 2h (default: setting timeout, 2h)',
    )
    .option('--restart', 'ignore a saved run of the same input and start over')
    .option(
      '--resend-unconfirmed',
      'send again addresses whose answer was lost (they may be charged twice)',
    )
    .option(
      '--max-age <duration>',
      'use cached verdicts younger than this, e.g. 7d (default: setting cache_max_age, 30d)',
    )
    .option('--refresh', 'verify every address again (paying again) and keep the new verdicts')
    .option('--no-cache', 'neither read nor write the results cache')
    .option(
      '--formula-escape <mode>',
      'auto, always, never (default: setting formula_escape, auto)',
    )
    .option('--bom', 'start a CSV/TSV output with a UTF-8 BOM')
    .option('--no-bom', 'never start the output with a BOM')
    .option('--output-delimiter <c>', 'output delimiter: , ; | tab (default: the input’s)')
    .option('--sheet <name|n>', SHEET_HELP)
    .option('--delimiter <c>', 'input delimiter: , ; | tab (default: detected)')
    .option('--encoding <name>', 'input encoding (default: detected)')
    .option('--header-row <n>', 'line number of the header row (default: detected)')
    .option(
      '--input-format <format>',
      'input format: csv, tsv, json, jsonl, xlsx (default: detected)',
    )
    .addHelpText(
      'after',
      `
Each distinct address (domain case-insensitive, local part as written) is verified once
and its verdict fanned out to every row holding it; verdicts younger than --max-age come
from the results cache, shared with \`enrich verify-email\`. Every row keeps all its
columns and gets enrich_status, enrich_error, enrich_credit_charged, enrich_cached_at,
verify_status (valid, invalid, unknown) and verify_credit_charged. A value that is not an
email address is never sent: enrich_status invalid, verify_status invalid.

Exit codes: 0 done, 2 usage or input error, 3 some addresses not verified (resumable), 4 key
refused, 5 verification credits exhausted (again after a top-up) or --max-credits reached (again:
only the addresses left are sent), 6 service unreachable, 130 interrupted (again to resume).

Examples:
  $ enrich verify-emails leads.csv --dry-run
  $ enrich verify-emails leads.csv -o verified.csv
  $ enrich verify-emails export.xlsx --map email="Work Email" -o verified.xlsx --max-credits 500
  $ cat leads.jsonl | enrich verify-emails - --format jsonl > verified.jsonl
  $ enrich verify-emails leads.csv -o verified.csv --rate-limit 10 --json > summary.json
  $ enrich verify-emails fixtures/contacts.csv --sandbox -o verified.csv`,
    )
    .action(
      action<Record<string, unknown>>(async ({ args, options, globals }) => {
        const { runVerifyEmails } = await import('./verify-emails/run.js');
        return runVerifyEmails(args[0] as string, options, globals);
      }),
    );
}
