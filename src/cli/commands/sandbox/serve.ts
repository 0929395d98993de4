import { Help, type Command } from 'commander';
import type { SandboxOptions } from '../../../sandbox/index.js';
import { action } from '../../action.js';
import { readsGlobals, type GlobalOptions } from '../../globals.js';

interface ServeFlags {
  port: string;
  host: string;
  credits?: string;
  verificationCredits?: string;
  jobMs: string;
  recordMs?: string;
  parallelJobs?: string;
  ttl?: string;
  rateLimit: string;
  maxBatch?: string;
  faults?: string;
  seed?: string;
  state?: string;
  maxJobs?: string;
  maxStoredMb?: string;
  maxUnpaidMb?: string;
  specOnly?: boolean;
}

/** The global options the server reads (its help lists only these). */
export const SERVE_GLOBALS = { flags: ['--json', '--quiet'] };

/** The options of `enrich sandbox` (serve). */
function serveOptions(c: Command): Command {
  return c
    .option('--port <n>', 'port to listen on (0 picks a free one)', '4010')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--credits <n>', 'enrichment credits of the first account (default 100000)')
    .option('--verification-credits <n>', 'email verification credits (default 10000)')
    .option('--job-ms <n>', 'how long a bulk job takes, in ms', '1000')
    .option('--record-ms <n>', 'and this many ms more per record of the job (default 0)')
    .option(
      '--parallel-jobs <n>',
      'bulk jobs of an account processed at once; later ones queue (default 0 = no limit)',
    )
    .option('--ttl <duration>', 'how long bulk results stay downloadable (default 24h)')
    .option('--rate-limit <req/s>', 'requests per second per key, burst 2x (0 = off)', '50')
    .option('--max-batch <n>', 'most records per bulk submission (default 10000)')
    .option(
      '--faults <spec>',
      'inject faults: JSON, or e.g. 500=0.05,429=0.05,reset=0.02,latency=0-50',
    )
    .option('--seed <n>', 'seed of the synthetic data (default 1)')
    .option(
      '--state <dir>',
      'keep accounts, keys and jobs in this directory (each change on disk before its answer)',
    )
    .option(
      '--max-jobs <n>',
      'most unexpired bulk jobs per account, then 429 (default 10000; 0 = no cap)',
    )
    .option(
      '--max-stored-mb <n>',
      'most MiB of bulk results kept per account, then 429 (default 2048; 0 = no cap)',
    )
    .option(
      '--max-unpaid-mb <n>',
      'most MiB of kept results no credit paid for, per account, then 429 (default 128; 0 = no cap)',
    )
    .option(
      '--spec-only',
      'keep only api-spec.md promises: no idempotency keys, other error wording, no Retry-After',
    );
}

/**
 * Registers `enrich sandbox serve`, what `enrich sandbox [options]` runs: the server's options
 * are those of this default (hidden) subcommand, not of `sandbox`, since commander would give
 * a command's options to all its subcommands (`sandbox keys list` would take --port, and list
 * it among its global options).
 */
export function registerSandboxServe(sandbox: Command): void {
  const server = serveOptions(
    readsGlobals(sandbox.command('serve', { isDefault: true, hidden: true }), SERVE_GLOBALS),
  )
    .description('serve the sandbox: what `enrich sandbox [options]` does')
    .addHelpText('after', '\nExamples:\n  $ enrich sandbox serve --port 0 --json')
    // Said in its own words below: commander would speak of `serve`, a name nobody typed.
    .allowExcessArguments()
    .action(
      action<ServeFlags>(async ({ args, options, globals }) => {
        if (args.length > 0) await refuseArguments(args);
        const opts = await sandboxOptionsFromFlags(options);
        return serve(opts, globals);
      }),
    );
  showOptionsOf(sandbox, server);
}

/**
 * `enrich sandbox --help` lists the options of `serve`, which takes them in its place. Only
 * the help text: an unknown option's suggestions still see the group's own options.
 */
function showOptionsOf(group: Command, server: Command): void {
  group.configureHelp({
    ...group.configureHelp(),
    formatHelp(this: Help, cmd: Command, helper: Help) {
      if (cmd !== group) return Help.prototype.formatHelp.call(this, cmd, helper);
      const shown = Object.create(helper) as Help;
      shown.visibleOptions = (c: Command) => helper.visibleOptions(c === group ? server : c);
      return Help.prototype.formatHelp.call(this, cmd, shown);
    },
  });
}

/** `enrich sandbox foo`, `enrich sandbox --port 0 keys list`: a usage error in the CLI's words. */
async function refuseArguments(args: string[]): Promise<never> {
  const { usageError } = await import('../../../errors.js');
  throw usageError(`unexpected "${args.join(' ')}" after \`enrich sandbox\``, {
    hint: 'its commands (keys, accounts, credits) come right after `enrich sandbox`; without one, it serves',
  });
}

/** Turns the serve flags into sandbox options (CLI defaults: port 4010, job 1s, 50 req/s). */
async function sandboxOptionsFromFlags(f: ServeFlags): Promise<SandboxOptions> {
  const { usageError } = await import('../../../errors.js');
  const { parseDuration } = await import('../../../config/duration.js');
  const { parseFaultSpec } = await import('../../../sandbox/index.js');
  const int = (v: string | undefined, flag: string): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(Number(v)))
      throw usageError(`${flag}: expected a whole number >= 0, got "${v}"`);
    return Number(v);
  };
  const port = int(f.port, '--port');
  if (port !== undefined && port > 65_535)
    throw usageError(`--port: expected a port from 0 to 65535, got "${f.port}"`);
  const rate = Number(f.rateLimit);
  if (!Number.isFinite(rate) || rate < 0) {
    throw usageError(`--rate-limit: expected requests per second >= 0, got "${f.rateLimit}"`);
  }
  return {
    port,
    host: f.host,
    credits: int(f.credits, '--credits'),
    verificationCredits: int(f.verificationCredits, '--verification-credits'),
    jobMs: int(f.jobMs, '--job-ms'),
    recordMs: int(f.recordMs, '--record-ms'),
    parallelJobs: int(f.parallelJobs, '--parallel-jobs'),
    ttlMs: f.ttl === undefined ? undefined : parseDuration(f.ttl, '--ttl'),
    rateLimit: rate,
    maxBatch: int(f.maxBatch, '--max-batch'),
    faults: f.faults === undefined ? undefined : parseFaultSpec(f.faults),
    seed: int(f.seed, '--seed'),
    stateDir: f.state,
    maxJobsPerAccount: int(f.maxJobs, '--max-jobs'),
    maxStoredBytesPerAccount: mib(int(f.maxStoredMb, '--max-stored-mb')),
    maxUnpaidBytesPerAccount: mib(int(f.maxUnpaidMb, '--max-unpaid-mb')),
    specOnly: f.specOnly === true,
  };
}

function mib(n: number | undefined): number | undefined {
  return n === undefined ? undefined : n * 1024 * 1024;
}

async function serve(opts: SandboxOptions, globals: GlobalOptions): Promise<number> {
  const { startSandbox } = await import('../../../sandbox/index.js');
  const { say } = await import('../../output.js');
  const sb = await startSandbox(opts);
  if (globals.json) {
    process.stdout.write(
      `${JSON.stringify({ base_url: sb.url, api_key: sb.apiKey, admin_token: sb.adminToken })}\n`,
    );
  } else {
    process.stdout.write(
      `Sandbox listening on ${sb.url}\nAPI key:     ${sb.apiKey}\nAdmin token: ${sb.adminToken}\n`,
    );
    say(
      globals.quiet,
      `\nTry: ENRICH_BASE_URL=${sb.url} ENRICH_API_KEY=<the key> enrich verify-email jane@acme.com`,
    );
    say(globals.quiet, 'Press Ctrl+C to stop.');
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sb.close();
  say(globals.quiet || globals.json, 'Sandbox stopped.');
  return 0;
}
