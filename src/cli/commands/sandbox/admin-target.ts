import type { Command } from 'commander';
import { usageError } from '../../../errors.js';
import type { AdminTarget } from '../../../sandbox/admin-client.js';
import type { GlobalOptions } from '../../globals.js';

/** The flags every admin command of a running sandbox takes. */
export interface TargetFlags {
  url?: string;
  adminToken?: string;
}

/** Adds --url and --admin-token to an admin command. */
export function withTarget(c: Command): Command {
  return c
    .option('--url <url>', 'base URL of the sandbox (env ENRICH_SANDBOX_URL)')
    .option('--admin-token <token>', 'admin token it printed (env ENRICH_SANDBOX_ADMIN_TOKEN)');
}

/** The running sandbox the admin commands talk to: flags, else environment, else 127.0.0.1:4010. */
export function adminTarget(f: TargetFlags): AdminTarget {
  const url = f.url ?? process.env.ENRICH_SANDBOX_URL ?? 'http://127.0.0.1:4010';
  const adminToken = f.adminToken ?? process.env.ENRICH_SANDBOX_ADMIN_TOKEN;
  if (!adminToken) {
    throw usageError('no admin token: pass --admin-token or set ENRICH_SANDBOX_ADMIN_TOKEN', {
      hint: '`enrich sandbox` prints it when it starts',
    });
  }
  return { url, adminToken };
}

/** Prints rows under a header, in columns, on stdout. */
export function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const r of [head, ...rows]) {
    process.stdout.write(
      `${r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}

/** Prints a new key (of a new key or a new account): JSON, or fields and a note that it is shown once. */
export async function printCreatedKey(created: object, globals: GlobalOptions): Promise<number> {
  const { printJson, printKeyValues, say } = await import('../../output.js');
  if (globals.json) printJson(created);
  else {
    printKeyValues({ ...created });
    say(globals.quiet, 'The key is shown only this once: store it now.');
  }
  return 0;
}
