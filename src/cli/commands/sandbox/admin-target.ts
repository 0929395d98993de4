import type { Command } from 'commander';
import { parseBaseUrl } from '../../../api/base-url.js';
import { usageError } from '../../../errors.js';
import type { AdminTarget } from '../../../sandbox/admin-client.js';
import { readsGlobals, type GlobalOptions, type GlobalsRead } from '../../globals.js';

/** The flags every admin command of a running sandbox takes. */
export interface TargetFlags {
  url?: string;
  adminToken?: string;
}

/** Where the admin commands look for the sandbox without --url, in order (README says the same). */
const TARGET_FALLBACK =
  'the global --base-url, else env ENRICH_SANDBOX_URL, else http://127.0.0.1:4010';

/** The global options the admin commands read (their help lists only these). */
export const ADMIN_GLOBALS: GlobalsRead = {
  flags: ['--base-url', '--json', '--quiet'],
  meaning: {
    '--base-url': 'base URL of the sandbox when --url is not given (not ENRICH_BASE_URL)',
  },
};

/** Adds --url and --admin-token to an admin command. */
export function withTarget(c: Command): Command {
  return readsGlobals(c, ADMIN_GLOBALS)
    .option('--url <url>', `base URL of the sandbox; without it: ${TARGET_FALLBACK}`)
    .option('--admin-token <token>', 'admin token it printed (env ENRICH_SANDBOX_ADMIN_TOKEN)');
}

/**
 * The running sandbox the admin commands talk to: --url, else TARGET_FALLBACK (flags before
 * the environment, the command's own flag first). ENRICH_BASE_URL and a profile's base_url
 * are not read: they name the service runs use, most often the real one, which has no admin
 * API and is not to be sent the admin token.
 */
export function adminTarget(f: TargetFlags, globals: Pick<GlobalOptions, 'baseUrl'>): AdminTarget {
  const url = f.url ?? globals.baseUrl ?? process.env.ENRICH_SANDBOX_URL ?? 'http://127.0.0.1:4010';
  parseBaseUrl(url);
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
