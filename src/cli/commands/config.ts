import type { Command } from 'commander';
import { SETTING_KEYS } from '../../config/settings-table.js';
import { action } from '../action.js';

/** "Settings: base_url, …": every setting of the table (the help never misses one), wrapped at 80 columns. */
function settingsLine(): string {
  const done: string[] = [];
  let line = 'Settings:';
  for (const [i, key] of SETTING_KEYS.entries()) {
    const word = i < SETTING_KEYS.length - 1 ? `${key},` : key;
    if (line.length + 1 + word.length > 80) {
      done.push(line);
      line = word;
    } else line += ` ${word}`;
  }
  return [...done, line].join('\n');
}

/** Registers `enrich config list|get|set|unset`. */
export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('show and change settings of a profile, each with its source')
    .addHelpText(
      'after',
      `
${settingsLine()}
(api_key is shown masked; set it with \`enrich auth login\`).
Precedence: flags > environment (ENRICH_*) > profile in the config file > defaults.

Examples:
  $ enrich config list
  $ enrich config set base_url https://api.example.com
  $ enrich config set batch_size 500 --profile staging
  $ enrich config get concurrency
  $ enrich config unset batch_size`,
    );
  config
    .command('list')
    .description('every setting with its value and source (default, file, env or flag)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich config list\n  $ enrich config list --profile staging --json',
    )
    .action(
      action<object>(async ({ globals }) => (await import('./config/run.js')).runList(globals)),
    );
  config
    .command('get')
    .description('print one setting')
    .argument('<key>', 'setting name, e.g. batch_size')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich config get base_url\n  $ enrich config get batch_size --json',
    )
    .action(
      action<object>(async ({ args, globals }) =>
        (await import('./config/run.js')).runGet(globals, args[0] ?? ''),
      ),
    );
  config
    .command('set')
    .description('store one setting in the profile (checked first)')
    .argument('<key>', 'setting name')
    .argument('<value>', 'new value')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich config set base_url https://api.example.com\n  $ enrich config set timeout 30m\n  $ enrich config set formula_escape always --profile ci',
    )
    .action(
      action<object>(async ({ args, globals }) =>
        (await import('./config/run.js')).runSet(globals, args[0] ?? '', args[1] ?? ''),
      ),
    );
  config
    .command('unset')
    .description('remove one setting from the profile (back to env or default)')
    .argument('<key>', 'setting name')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich config unset batch_size\n  $ enrich config unset base_url --profile staging',
    )
    .action(
      action<object>(async ({ args, globals }) =>
        (await import('./config/run.js')).runUnset(globals, args[0] ?? ''),
      ),
    );
}
