import type { Command } from 'commander';
import { usageError } from '../../../errors.js';
import type { AccountView } from '../../../sandbox/types.js';
import { action } from '../../action.js';
import { readsGlobals, type GlobalOptions } from '../../globals.js';
import {
  ADMIN_GLOBALS,
  adminTarget,
  printCreatedKey,
  printTable,
  withTarget,
  type TargetFlags,
} from './admin-target.js';

interface AccountFlags extends TargetFlags {
  credits?: string;
  verificationCredits?: string;
}

interface CreditFlags extends TargetFlags {
  verification?: boolean;
  account?: string;
}

/** A whole number of credits, 0 or more. */
function credits(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n))
    throw usageError(`${what}: expected a whole number of credits >= 0, got "${value}"`);
  return n;
}

/** Registers `enrich sandbox accounts create|list` and `enrich sandbox credits set|add`. */
export function registerSandboxAccounts(sandbox: Command): void {
  const accounts = readsGlobals(sandbox.command('accounts'), ADMIN_GLOBALS)
    .description('create and list the accounts of a running sandbox (admin API)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich sandbox accounts create --credits 500\n  $ enrich sandbox accounts list',
    );
  withTarget(accounts.command('create'))
    .description('create an account with a first API key (printed once)')
    .option('--credits <n>', 'its enrichment credits (default: the sandbox --credits)')
    .option('--verification-credits <n>', 'its email verification credits')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich sandbox accounts create --credits 500 --verification-credits 20 --json',
    )
    .action(action<AccountFlags>(async ({ options, globals }) => createAccount(options, globals)));
  withTarget(accounts.command('list'))
    .description('list the accounts with their balances, the first (default) one first')
    .addHelpText('after', '\nExamples:\n  $ enrich sandbox accounts list --json')
    .action(action<TargetFlags>(async ({ options, globals }) => listAccounts(options, globals)));

  const credit = readsGlobals(sandbox.command('credits'), ADMIN_GLOBALS)
    .description('top up or set the credits of an account of a running sandbox (admin API)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich sandbox credits add 1000\n  $ enrich sandbox credits set 0 --account acc_1a2b3c\n  $ enrich sandbox credits add 50 --verification',
    );
  for (const [name, what, example] of [
    ['set', 'set the balance to <n> credits', 'set 0 --account acc_1a2b3c'],
    ['add', 'add <n> credits to the balance', 'add 50 --verification'],
  ] as const) {
    withTarget(credit.command(name))
      .description(`${what} (enrichment credits; --verification: email verification credits)`)
      .addHelpText('after', `\nExamples:\n  $ enrich sandbox credits ${example}`)
      .argument('<n>', 'a whole number of credits')
      .option('--verification', 'change the email verification credits instead')
      .option(
        '--account <id>',
        'the account (default: the first, whose key `enrich sandbox` printed)',
      )
      .action(
        action<CreditFlags>(async ({ args, options, globals }) =>
          changeCredits(name, args[0] ?? '', options, globals),
        ),
      );
  }
}

async function createAccount(f: AccountFlags, globals: GlobalOptions): Promise<number> {
  const { adminCreateAccount } = await import('../../../sandbox/index.js');
  const body = {
    credits: credits(f.credits, '--credits'),
    verification_credits: credits(f.verificationCredits, '--verification-credits'),
  };
  return printCreatedKey(await adminCreateAccount(adminTarget(f, globals), body), globals);
}

async function listAccounts(f: TargetFlags, globals: GlobalOptions): Promise<number> {
  const { adminListAccounts } = await import('../../../sandbox/index.js');
  const { printJson } = await import('../../output.js');
  const accounts = await adminListAccounts(adminTarget(f, globals));
  if (globals.json) printJson(accounts);
  else printTable(['ACCOUNT', 'CREDITS', 'VERIFICATION', 'STATUS'], accounts.map(accountRow));
  return 0;
}

const accountRow = (a: AccountView) => [
  a.account_id,
  String(a.credits),
  String(a.verification_credits),
  a.suspended ? 'suspended' : 'active',
];

/** `credits set|add <n>`: the account's balance set to n, or raised by n (read, then written). */
async function changeCredits(
  how: 'set' | 'add',
  value: string,
  f: CreditFlags,
  globals: GlobalOptions,
): Promise<number> {
  const n = credits(value, `enrich sandbox credits ${how}`) as number;
  const sb = await import('../../../sandbox/index.js');
  const { printJson, say } = await import('../../output.js');
  const t = adminTarget(f, globals);
  const id = f.account ?? (await sb.adminListAccounts(t))[0]?.account_id;
  if (!id)
    throw usageError(
      'the sandbox has no account: create one with `enrich sandbox accounts create`',
    );
  const field = f.verification ? 'verification_credits' : 'credits';
  const before = await sb.adminGetAccount(t, id);
  const target = how === 'set' ? n : before[field] + n;
  if (!Number.isSafeInteger(target))
    throw usageError(`enrich sandbox credits add: ${before[field]} + ${n} is too large`);
  const after = await sb.adminUpdateAccount(t, id, { [field]: target });
  if (globals.json) printJson(after);
  else say(globals.quiet, `${id}: ${field.replace('_', ' ')} ${before[field]} -> ${after[field]}`);
  return 0;
}
