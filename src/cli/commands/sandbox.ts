import type { Command } from 'commander';
import { action } from '../action.js';
import { readsGlobals, type GlobalOptions } from '../globals.js';
import { registerSandboxAccounts } from './sandbox/accounts.js';
import {
  ADMIN_GLOBALS,
  adminTarget,
  printCreatedKey,
  printTable,
  withTarget,
} from './sandbox/admin-target.js';
import { registerSandboxServe, SERVE_GLOBALS } from './sandbox/serve.js';

interface AdminFlags {
  url?: string;
  adminToken?: string;
  name?: string;
  description?: string;
  account?: string;
}

/** Registers `enrich sandbox` (serve), `keys create|list|revoke`, `accounts create|list` and `credits set|add`. */
export function registerSandbox(program: Command): void {
  const sandbox = readsGlobals(program.command('sandbox'), SERVE_GLOBALS)
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
    );
  registerSandboxServe(sandbox);

  const keys = readsGlobals(sandbox.command('keys'), ADMIN_GLOBALS)
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
