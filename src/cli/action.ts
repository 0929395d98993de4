import type { Command } from 'commander';
import { readGlobals, type GlobalOptions } from './globals.js';

/** Where an action leaves its exit code: on the program it ran in, not in a module variable. */
const EXIT_CODE = Symbol('enrich.exitCode');
type WithExitCode = Command & { [EXIT_CODE]?: number };

/** The exit code the action run by `program` returned (0 when it returned nothing). */
export function exitCodeOf(program: Command): number {
  return (program as WithExitCode)[EXIT_CODE] ?? 0;
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

type Handler<O> = (args: {
  args: string[];
  options: O;
  globals: GlobalOptions;
  command: Command;
}) => Promise<number | void>;

/**
 * Wraps a command handler for commander: hands it typed options and the globals,
 * and leaves the exit code it returns on the program. Errors propagate to main(), which
 * prints them.
 */
export function action<O extends object>(handler: Handler<O>) {
  return async (...raw: unknown[]): Promise<void> => {
    const command = raw[raw.length - 1] as Command;
    const options = command.opts() as O;
    const args = command.args;
    const code = await handler({ args, options, globals: readGlobals(command), command });
    (rootOf(command) as WithExitCode)[EXIT_CODE] = code ?? 0;
  };
}
