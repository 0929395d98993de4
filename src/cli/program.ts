import { Command, Help, Option } from 'commander';
import { VERSION } from '../version.js';
import { globalsReadBy } from './globals.js';
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
    .option(
      '--json',
      'machine-readable JSON on stdout (a bulk run: its summary, so with -o <file>)',
    )
    .option('-q, --quiet', 'print no progress or summary on stderr')
    .option(
      '-v, --verbose',
      'more detail on stderr (a bulk run: a line per job submitted, done or sent again)',
    )
    .option('--debug', 'log every HTTP request on stderr (the key is never shown)')
    .option('--no-color', 'no colour on stderr (also env NO_COLOR)')
    .option('--no-progress', 'no progress spinner or progress lines')
    .option('--no-input', 'never prompt; fail instead')
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(usageLine(s)),
    })
    .configureHelp({ showGlobalOptions: true, optionDescription, visibleGlobalOptions })
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

/**
 * Commander's own errors (an unknown option, a missing argument) in the CLI's words:
 * `enrich: unknown option '--fo' [USAGE]` like every other error, not `error: …`.
 */
export function usageLine(commanderText: string): string {
  return `enrich: ${commanderText.replace(/^error: /, '').trimEnd()} [USAGE]\n`;
}

/**
 * An option's help text with its default in one style, `(default: 1000)`: commander's own
 * (`(default: "1000")`, quoted) and the descriptions' (`(default 10)`) alike.
 */
function optionDescription(this: Help, option: Option): string {
  return Help.prototype.optionDescription
    .call(this, option)
    .replace(/\(default: "([^"]*)"\)/, '(default: $1)')
    .replace(/\(default (?!:)/, '(default: ');
}

/** The global options a command's help lists: those it reads, in its words (readsGlobals). */
function visibleGlobalOptions(this: Help, cmd: Command): Option[] {
  const all = Help.prototype.visibleGlobalOptions.call(this, cmd);
  const reads = globalsReadBy(cmd);
  if (!reads) return all;
  return all
    .filter((option) => reads.flags.includes(option.long ?? ''))
    .map((option) => {
      const meaning = reads.meaning?.[option.long ?? ''];
      return meaning ? new Option(option.flags, meaning) : option;
    });
}

/**
 * `enrich help jobs list` as `enrich jobs list --help`: commander's help command looks one
 * level deep only, and would show the help of `jobs` (its examples) for `list`.
 */
export function helpArgv(argv: string[]): string[] {
  const [node = '', script = '', first, ...rest] = argv;
  if (first !== 'help' || rest.length < 2 || rest.some((a) => a.startsWith('-'))) return argv;
  return [node, script, ...rest, '--help'];
}
