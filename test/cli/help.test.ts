import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, helpArgv, usageLine } from '../../src/cli/program.js';

/** Every command below the root, with its path (`jobs list`). */
function commands(): { path: string; cmd: Command }[] {
  const found: { path: string; cmd: Command }[] = [];
  const walk = (cmd: Command, prefix: string) => {
    for (const sub of cmd.commands) {
      if (sub.name() === 'help') continue;
      const path = `${prefix}${sub.name()}`;
      found.push({ path, cmd: sub });
      walk(sub, `${path} `);
    }
  };
  walk(buildProgram(), '');
  return found;
}

/** What `enrich <path> --help` prints, the text added after the options included. */
function helpOf(cmd: Command): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => void (text += s) });
  cmd.outputHelp();
  return text;
}

describe('help of every command', () => {
  const all = commands();

  it('covers the commands and their subcommands', () => {
    expect(all.map((c) => c.path)).toEqual(
      expect.arrayContaining(['contacts', 'jobs', 'jobs list', 'jobs show', 'jobs fetch']),
    );
  });

  it.each(all)('`enrich $path --help` lists the global options its examples may use', ({ cmd }) => {
    const help = helpOf(cmd);
    expect(help).toContain('Global Options:');
    for (const flag of [
      '--sandbox',
      '--json',
      '--quiet',
      '--verbose',
      '--no-color',
      '--no-progress',
    ])
      expect(help).toContain(flag);
  });

  it.each(all)('`enrich $path --help` shows defaults one way: (default: …)', ({ cmd }) => {
    const help = helpOf(cmd).replace(/\s+/g, ' ');
    expect(help).not.toMatch(/\(default (?!:)/);
    expect(help).not.toMatch(/\(default: "/);
  });

  it.each(all)('`enrich $path --help` gives examples of that command only', ({ path, cmd }) => {
    const examples = helpOf(cmd)
      .split('\n')
      .filter((l) => l.startsWith('  $ '));
    for (const ex of examples) expect(ex).toContain(`enrich ${path}`);
  });

  it('every sandbox admin command names where it looks for the sandbox, in order', () => {
    const admin = all.filter((c) => c.cmd.options.some((o) => o.long === '--admin-token'));
    expect(admin.map((c) => c.path).sort()).toEqual([
      'sandbox accounts create',
      'sandbox accounts list',
      'sandbox credits add',
      'sandbox credits set',
      'sandbox keys create',
      'sandbox keys list',
      'sandbox keys revoke',
    ]);
    for (const { cmd } of admin)
      expect(helpOf(cmd).replace(/\s+/g, ' ')).toContain(
        '--url <url> base URL of the sandbox; without it: the global --base-url, else env ENRICH_SANDBOX_URL, else http://127.0.0.1:4010',
      );
  });

  it('shows the sandbox defaults commander fills in without quotes', () => {
    const sandbox = all.find((c) => c.path === 'sandbox');
    expect(helpOf(sandbox?.cmd as Command)).toMatch(
      /--job-ms <n> +how long a bulk job takes, in ms \(default: 1000\)/,
    );
  });
});

describe('`enrich help <command> <subcommand>`', () => {
  it('is the subcommand own --help (commander alone would show the parent)', () => {
    expect(helpArgv(['node', 'enrich', 'help', 'jobs', 'list'])).toEqual([
      'node',
      'enrich',
      'jobs',
      'list',
      '--help',
    ]);
    // One level deep commander handles itself; options are left to commander.
    for (const argv of [
      ['node', 'enrich', 'help', 'jobs'],
      ['node', 'enrich', 'help', 'jobs', '--json'],
      ['node', 'enrich', 'contacts', 'help', 'x'],
    ])
      expect(helpArgv(argv)).toBe(argv);
  });
});

describe("commander's own errors", () => {
  it('read like every other error of the CLI: enrich: … [USAGE]', () => {
    expect(usageLine("error: unknown option '--fo'\n")).toBe(
      "enrich: unknown option '--fo' [USAGE]\n",
    );
    expect(usageLine("error: missing required argument 'input'\n")).toBe(
      "enrich: missing required argument 'input' [USAGE]\n",
    );
  });
});
