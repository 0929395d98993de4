import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { globalsReadBy } from '../../src/cli/globals.js';
import { buildProgram, helpArgv, usageLine } from '../../src/cli/program.js';
import { SETTING_KEYS } from '../../src/config/settings-table.js';

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

  /** The long flags its help lists under "Global Options:" (as its help computes them). */
  const globalFlags = (cmd: Command) =>
    cmd
      .createHelp()
      .visibleGlobalOptions(cmd)
      .map((o) => o.long);

  it.each(all)('`enrich $path --help` lists the global options it reads', ({ cmd }) => {
    const help = helpOf(cmd);
    expect(help).toContain('Global Options:');
    const reads = globalsReadBy(cmd);
    // Commands that say nothing read them all (a bulk run, a lookup, auth, config, jobs, cache).
    const expected = reads?.flags ?? [
      '--version',
      '--profile',
      '--base-url',
      '--sandbox',
      '--json',
      '--quiet',
      '--verbose',
      '--debug',
      '--no-color',
      '--no-progress',
      '--no-input',
    ];
    expect(globalFlags(cmd)).toEqual(expected);
    const listed = help.split('Global Options:\n')[1] ?? '';
    for (const flag of expected)
      expect(listed).toMatch(new RegExp(`^ {2}(-\\w, )?${flag}\\b`, 'm'));
  });

  it.each(all)(
    '`enrich $path --help` has examples, and lists every option they use',
    ({ path, cmd }) => {
      const help = helpOf(cmd);
      expect(help).toContain('\nExamples:\n');
      const subcommands = cmd.commands.map((c) => c.name());
      for (const ex of help.split('\n').filter((l) => l.startsWith('  $ '))) {
        const words = ex.split(`enrich ${path}`)[1]?.trim().split(/\s+/) ?? [];
        if (subcommands.includes(words[0] ?? '')) continue; // an example of a subcommand
        for (const flag of words.filter((w) => w.startsWith('--')))
          expect(help).toMatch(new RegExp(`^ {2}(-\\w, )?${flag.split('=')[0]}\\b`, 'm'));
      }
    },
  );

  it.each(all.filter((c) => c.path.startsWith('sandbox ') && c.path !== 'sandbox serve'))(
    "`enrich $path --help` lists none of the server's options (regression: as global options)",
    ({ cmd }) => {
      const server = all.find((c) => c.path === 'sandbox serve')!.cmd;
      const own = new Set(cmd.options.map((o) => o.long));
      // What it lists as options, its own and global (its examples may show a subcommand's).
      const listed = helpOf(cmd).split('\nExamples:\n')[0];
      for (const option of server.options)
        if (!own.has(option.long)) expect(listed).not.toContain(option.long);
      expect(globalFlags(cmd)).toEqual(['--base-url', '--json', '--quiet']);
    },
  );

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

  it.each(['contacts', 'companies', 'verify-emails'])(
    '`enrich %s --help` shows the default of --timeout (regression: none for the bulk commands)',
    (path) => {
      const cmd = all.find((c) => c.path === path)?.cmd as Command;
      expect(helpOf(cmd).replace(/\s+/g, ' ')).toMatch(
        /--timeout <duration> [^-]*\(default: setting timeout, 2h\)/,
      );
    },
  );

  it.each(['contacts', 'companies'])(
    '`enrich %s --help` says --no-wait is collected by the same command (regression: `enrich jobs`, which writes no output)',
    (path) => {
      const cmd = all.find((c) => c.path === path)?.cmd as Command;
      const help = helpOf(cmd).replace(/\s+/g, ' ');
      expect(help).toContain(
        '--no-wait submit the jobs and exit; the same command run again later downloads the results and writes the output',
      );
      expect(help).not.toContain('fetch later with `enrich jobs`');
    },
  );

  it('shows the sandbox defaults commander fills in without quotes', () => {
    const sandbox = all.find((c) => c.path === 'sandbox');
    expect(helpOf(sandbox?.cmd as Command)).toMatch(
      /--job-ms <n> +how long a bulk job takes, in ms \(default: 1000\)/,
    );
  });
});

describe('the server options belong to `enrich sandbox` alone', () => {
  /** Parses `enrich ...argv` in this process, printing nothing; resolves to what it threw. */
  const failureOf = async (argv: string[]) => {
    const program = buildProgram();
    const quiet = (cmd: Command) => {
      cmd.configureOutput({ writeErr: () => undefined, outputError: () => undefined });
      cmd.commands.forEach(quiet);
    };
    quiet(program);
    return program.parseAsync(argv, { from: 'user' }).then(
      () => undefined,
      (err: unknown) => err,
    );
  };

  it('an admin command refuses them (regression: taken, and ignored)', async () => {
    for (const argv of [
      ['sandbox', 'keys', 'list', '--port', '5'],
      ['sandbox', 'credits', 'add', '5', '--job-ms', '0'],
      ['sandbox', 'accounts', 'list', '--spec-only'],
    ])
      expect(await failureOf(argv)).toMatchObject({ code: 'commander.unknownOption' });
  });

  it('`enrich sandbox` with a word that is none of its commands is a usage error in its own words', async () => {
    for (const argv of [
      ['sandbox', 'foo'],
      ['sandbox', '--port', '0', 'keys', 'list'],
    ])
      expect(await failureOf(argv)).toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/^unexpected "(foo|keys list)" after `enrich sandbox`$/),
      });
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

describe('help of the bulk commands says what they read and write', () => {
  const byPath = (path: string) => {
    const found = buildProgram().commands.find((c) => c.name() === path);
    if (!found) throw new Error(`no command ${path}`);
    return helpOf(found).replace(/\s+/g, ' ');
  };

  it.each(['contacts', 'companies', 'verify-emails'])(
    '%s: reads workbooks too, and a workbook without -o or --format gives CSV (not "the input format")',
    (path) => {
      const help = byPath(path);
      expect(help).toMatch(/CSV\/TSV\/JSON\/JSONL\/XLSX file/);
      expect(help).toMatch(/else the input format, CSV for a workbook\)/);
    },
  );
});

describe('help of enrich config', () => {
  it('names every setting `enrich config list` shows (cache_max_age, run_retention, rate_limit too)', () => {
    const config = buildProgram().commands.find((c) => c.name() === 'config');
    if (!config) throw new Error('no command config');
    const help = helpOf(config);
    const named = /Settings:([^(]*)\(api_key/
      .exec(help)?.[1]
      ?.split(/[\s,]+/)
      .filter(Boolean);
    expect(named).toEqual([...SETTING_KEYS]);
    for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(84);
  });
});
