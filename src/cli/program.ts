import { Command } from 'commander';
import { VERSION } from '../version.js';
import { registerContacts } from './commands/contacts.js';
import { registerCompanies } from './commands/companies.js';
import { registerContact } from './commands/contact.js';
import { registerCompany } from './commands/company.js';
import { registerVerifyEmail } from './commands/verify-email.js';
import { registerVerifyEmails } from './commands/verify-emails.js';
import { registerAuth } from './commands/auth.js';
import { registerConfig } from './commands/config.js';
import { registerSandbox } from './commands/sandbox.js';
import { registerJobs } from './commands/jobs.js';
import { registerCache } from './commands/cache.js';

// Command modules import only commander and types at load time; each action imports
// what it needs, so `enrich --help` stays fast (DESIGN.md section 7).
// One line per command module, in the order `enrich --help` lists them.
const registrations: ((program: Command) => void)[] = [
  registerContacts,
  registerCompanies,
  registerContact,
  registerCompany,
  registerVerifyEmail,
  registerVerifyEmails,
  registerJobs,
  registerCache,
  registerAuth,
  registerConfig,
  registerSandbox,
];

/** Builds the commander program with the global options and every command. */
export function buildProgram(): Command {
  const program = new Command('enrich')
    .description(
      'Enrich CSV/TSV/JSON files of business contacts and companies through a B2B enrichment service.',
    )
    .version(VERSION, '-V, --version')
    .option('--profile <name>', 'settings profile (env ENRICH_PROFILE)')
    .option('--base-url <url>', 'service base URL (env ENRICH_BASE_URL)')
    .option('--sandbox', 'run against an embedded sandbox (no network, no key needed)')
    .option('--json', 'machine-readable JSON on stdout')
    .option('-q, --quiet', 'print no progress or summary on stderr')
    .option('-v, --verbose', 'more detail on stderr')
    .option('--debug', 'log every HTTP request on stderr (the key is never shown)')
    .option('--no-color', 'no colors')
    .option('--no-progress', 'no progress spinner')
    .option('--no-input', 'never prompt; fail instead')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)');
  program.addHelpText(
    'after',
    `
Examples:
  $ enrich contacts leads.csv -o enriched.csv
  $ enrich contacts fixtures/contacts.csv --sandbox -o enriched.csv
  $ enrich verify-email jane@example.com
  $ enrich sandbox --port 4010`,
  );
  for (const register of registrations) register(program);
  return program;
}
