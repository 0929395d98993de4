import type { Command } from 'commander';
import { action } from '../action.js';

/** Registers `enrich auth login|status|logout`. */
export function registerAuth(program: Command): void {
  const auth = program
    .command('auth')
    .description('store, check and remove the API key of a profile')
    .addHelpText(
      'after',
      `
Examples:
  $ enrich auth login --base-url https://api.example.com
  $ enrich auth login < key.txt
  $ enrich auth status
  $ enrich auth logout --profile staging`,
    );
  auth
    .command('login')
    .description('save an API key (hidden prompt, or piped on stdin) after a free check')
    .addHelpText(
      'after',
      `
The key is read from a hidden prompt on a terminal, or from stdin when piped;
it is never taken from a flag. It is checked (at no cost) before it is saved
in the config file (mode 0600). --base-url is saved in the profile too.

Examples:
  $ enrich auth login --base-url https://api.example.com
  $ enrich auth login --profile staging < staging-key.txt
  $ printf '%s\\n' "$KEY" | enrich auth login --no-input`,
    )
    .action(
      action<object>(async ({ globals }) => (await import('./auth/login.js')).runLogin(globals)),
    );
  auth
    .command('status')
    .description(
      'show the profile, base URL, where the key comes from (masked) and whether it works',
    )
    .addHelpText(
      'after',
      `
Exits 0 when the key works, 4 when there is none or it is refused.

Examples:
  $ enrich auth status
  $ enrich auth status --profile staging --json`,
    )
    .action(
      action<object>(async ({ globals }) => (await import('./auth/login.js')).runStatus(globals)),
    );
  auth
    .command('logout')
    .description("remove the profile's stored key")
    .addHelpText(
      'after',
      `
Examples:
  $ enrich auth logout
  $ enrich auth logout --profile staging`,
    )
    .action(
      action<object>(async ({ globals }) => (await import('./auth/login.js')).runLogout(globals)),
    );
}
