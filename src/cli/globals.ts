import type { Command } from 'commander';

/** Options every command accepts (DESIGN.md section 4), after commander parsed them. */
export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  sandbox: boolean;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
  debug: boolean;
  color: boolean;
  progress: boolean;
  input: boolean;
}

/**
 * The global options a command reads (by long flag), and what some of them mean for it when
 * that is not what they mean elsewhere: its help lists these, in those words.
 */
export interface GlobalsRead {
  readonly flags: readonly string[];
  readonly meaning?: Readonly<Record<string, string>>;
}

const READS = new WeakMap<Command, GlobalsRead>();

/** Says which global options `cmd` reads (its help lists only those); by default, all. */
export function readsGlobals(cmd: Command, reads: GlobalsRead): Command {
  READS.set(cmd, reads);
  return cmd;
}

/** The global options `cmd` said it reads; undefined: all of them. */
export function globalsReadBy(cmd: Command): GlobalsRead | undefined {
  return READS.get(cmd);
}

/** Reads the global options that apply to `cmd` (set on the root program). */
export function readGlobals(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals<Partial<GlobalOptions>>();
  return {
    profile: o.profile,
    baseUrl: o.baseUrl,
    sandbox: o.sandbox === true,
    json: o.json === true,
    quiet: o.quiet === true,
    verbose: o.verbose === true,
    debug: o.debug === true || process.env.ENRICH_DEBUG === '1',
    color: colorWanted(o.color, process.env),
    progress: o.progress !== false,
    input: o.input !== false,
  };
}

/**
 * Colour unless --no-color, NO_COLOR set to anything but empty (no-color.org), or a dumb
 * terminal. stdout carries data and is never coloured; this is for stderr's spinner.
 */
export function colorWanted(flag: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  return flag !== false && !env.NO_COLOR && env.TERM !== 'dumb';
}
