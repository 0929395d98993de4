import { CommanderError } from 'commander';
import { buildProgram, helpArgv } from './program.js';
import { exitCodeOf } from './action.js';
import { describeError } from './report-error.js';
import { fileSystemError } from '../io/output-target.js';
import { closedStdoutIsHandled, closedStdoutText } from './output.js';

/** Runs the CLI with `argv` (process.argv form) and resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  // A reader that goes away: `enrich jobs list | head` is no error and stops quietly; a bulk
  // run writing its data to stdout sets process.exitCode while it writes, so a closed pipe
  // (`enrich contacts x.csv | head`) stops it at once (nothing more is read or sent; the
  // journal is kept) and never ends in 0. A run in stopsOnClosedStdout (output.ts) stops itself.
  const debug = argv.includes('--debug') || process.env.ENRICH_DEBUG === '1';
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    // A run that stops by itself (verify-emails: its writes fail, it waits for the answers on
    // their way, paid for, and says what failed). A full disk too: ended here at once, those
    // answers would be lost, their addresses "may have been charged".
    if (closedStdoutIsHandled()) return;
    if (err.code !== 'EPIPE') {
      // A full disk or a broken device behind `> file`: said like any write failure (exit 2),
      // never a stack trace, and never 0.
      const failed = describeError(fileSystemError('write', 'standard output', err), debug);
      process.stderr.write(`${failed.text}\n`);
      process.exit(failed.exitCode);
    }
    const code = Number(process.exitCode ?? 0);
    if (code !== 0) process.stderr.write(closedStdoutText());
    process.exit(code);
  });
  const program = buildProgram();
  try {
    await program.parseAsync(helpArgv(argv));
    return exitCodeOf(program);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version end with exit 0; anything else commander rejects is usage (2).
      return err.exitCode === 0 ? 0 : 2;
    }
    const { text, exitCode } = describeError(err, debug);
    process.stderr.write(`${text}\n`);
    return exitCode;
  }
}
