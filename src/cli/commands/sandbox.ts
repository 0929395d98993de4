import type { Command } from 'commander';
import type { GlobalOptions } from '../globals.js';
import type { SandboxOptions } from '../../sandbox/index.js';
import { action } from '../action.js';
import { registerSandboxAccounts } from './sandbox/accounts.js';
import { adminTarget, printCreatedKey, printTable, withTarget } from './sandbox/admin-target.js';

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

interface AdminFlags {
  url?: string;
  adminToken?: string;
  name?: string;
  description?: string;
  account?: string;
}

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

/** Registers `enrich sandbox` (serve), `keys create|list|revoke`, `accounts create|list` and `credits set|add`. */
export function registerSandbox(program: Command): void {
  const sandbox = serveOptions(program.command('sandbox'))
    .description('serve a local sandbox of the enrichment service (synthetic, deterministic data)')
    .addHelpText(
      'after',
      `
Prints the base URL, an API key and the admin token on stdout (--json: one JSON
line {base_url, api_key, admin_token}), then serves until Ctrl+C / SIGTERM.

Examples:
  $ enrich sandbox
  $ enrich sandbox --port 0 --json
  $ enrich sandbox --spec-only --rate-limit 1
  $ enrich sandbox --credits 50 --job-ms 5000 --ttl 10m --faults 500=0.05,latency=0-50
  $ enrich sandbox --job-ms 0 --record-ms 5 --parallel-jobs 8
  $ enrich sandbox keys create --name ci --admin-token "$ENRICH_SANDBOX_ADMIN_TOKEN"
  $ enrich sandbox credits add 1000
  $ enrich sandbox accounts list`,
    )
    .action(
      action<ServeFlags>(async ({ options, globals }) => {
        const opts = await sandboxOptionsFromFlags(options);
        return serve(opts, globals);
      }),
    );

  const keys = sandbox
    .command('keys')
    .description('manage the API keys of a running sandbox (admin API)')
    .addHelpText(
      'after',
      `
Examples:
  $ enrich sandbox keys create --name ci
  $ enrich sandbox keys list --url http://127.0.0.1:4010
  $ enrich sandbox keys revoke key_1a2b3c4d5e6f7a8b`,
    );
  const target = withTarget;
  target(keys.command('create'))
    .description('create a key; it is printed once')
    .option('--name <name>', 'a name for the key')
    .option('--description <text>', 'what the key is for')
    .option('--account <id>', 'account to create it for (default: the first account)')
    .addHelpText('after', '\nExamples:\n  $ enrich sandbox keys create --name ci --json')
    .action(action<AdminFlags>(async ({ options, globals }) => keysCreate(options, globals)));
  target(keys.command('list'))
    .description('list keys (masked), revoked ones marked')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich sandbox keys list --json\n  $ enrich sandbox keys list --base-url http://127.0.0.1:4011',
    )
    .action(action<AdminFlags>(async ({ options, globals }) => keysList(options, globals)));
  target(keys.command('revoke'))
    .description('revoke a key: it stops working on the next request')
    .argument('<id>', 'key id (from `keys list`)')
    .addHelpText('after', '\nExamples:\n  $ enrich sandbox keys revoke key_1a2b3c4d5e6f7a8b')
    .action(
      action<AdminFlags>(async ({ args, options, globals }) =>
        keysRevoke(args[0] ?? '', options, globals),
      ),
    );
  registerSandboxAccounts(sandbox);
}

/** Turns the serve flags into sandbox options (CLI defaults: port 4010, job 1s, 50 req/s). */
async function sandboxOptionsFromFlags(f: ServeFlags): Promise<SandboxOptions> {
  const { usageError } = await import('../../errors.js');
  const { parseDuration } = await import('../../config/duration.js');
  const { parseFaultSpec } = await import('../../sandbox/index.js');
  const int = (v: string | undefined, flag: string): number | undefined => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v.trim()))
      throw usageError(`${flag}: expected a whole number >= 0, got "${v}"`);
    return Number(v);
  };
  const rate = Number(f.rateLimit);
  if (!Number.isFinite(rate) || rate < 0) {
    throw usageError(`--rate-limit: expected requests per second >= 0, got "${f.rateLimit}"`);
  }
  return {
    port: int(f.port, '--port'),
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
  const { startSandbox } = await import('../../sandbox/index.js');
  const { say } = await import('../output.js');
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

async function keysCreate(f: AdminFlags, globals: GlobalOptions): Promise<number> {
  const { adminCreateKey } = await import('../../sandbox/index.js');
  const created = await adminCreateKey(adminTarget(f, globals), {
    name: f.name,
    description: f.description,
    account_id: f.account,
  });
  return printCreatedKey(created, globals);
}

async function keysList(f: AdminFlags, globals: GlobalOptions): Promise<number> {
  const { adminListKeys } = await import('../../sandbox/index.js');
  const { printJson } = await import('../output.js');
  const keys = await adminListKeys(adminTarget(f, globals));
  if (globals.json) printJson(keys);
  else {
    const rows = keys.map((k) => [
      k.id,
      k.masked,
      k.revoked ? 'revoked' : 'active',
      k.account_id,
      k.name,
    ]);
    printTable(['ID', 'KEY', 'STATUS', 'ACCOUNT', 'NAME'], rows);
  }
  return 0;
}

async function keysRevoke(id: string, f: AdminFlags, globals: GlobalOptions): Promise<number> {
  const { adminRevokeKey } = await import('../../sandbox/index.js');
  const { printJson, say } = await import('../output.js');
  await adminRevokeKey(adminTarget(f, globals), id);
  if (globals.json) printJson({ id, revoked: true });
  else say(globals.quiet, `Revoked ${id}: it no longer authenticates.`);
  return 0;
}
