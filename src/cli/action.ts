import type { Command } from 'commander';
import { readGlobals, type GlobalOptions } from './globals.js';

let pendingExitCode = 0;

/** The exit code the last action asked for (0 when it returned nothing). */
export function takeExitCode(): number {
  const code = pendingExitCode;
  pendingExitCode = 0;
  return code;
}

type Handler<O> = (args: {
  args: string[];
  options: O;
  globals: GlobalOptions;
  command: Command;
}) => Promise<number | void>;

/**
 * Wraps a command handler for commander: hands it typed options and the globals,
 * and records the exit code it returns. Errors propagate to main(), which prints them.
 */
export function action<O extends object>(handler: Handler<O>) {
  return async (...raw: unknown[]): Promise<void> => {
    const command = raw[raw.length - 1] as Command;
    const options = command.opts() as O;
    const args = command.args;
    const code = await handler({ args, options, globals: readGlobals(command), command });
    pendingExitCode = code ?? 0;
  };
}
