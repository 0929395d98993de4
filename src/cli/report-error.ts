import { ApiError, EnrichError, formatLocation } from '../errors.js';

/** Turns any thrown value into the stderr text and exit code the user sees (never a stack trace unless --debug). */
export function describeError(err: unknown, debug: boolean): { text: string; exitCode: number } {
  if (err instanceof EnrichError) {
    const where = formatLocation(err.location);
    const lines = [`enrich: ${err.message}${where ? ` (${where})` : ''} [${err.code}]`];
    if (err instanceof ApiError) {
      for (const fe of err.fieldErrors) lines.push(`  ${fe.path}: ${fe.message}`);
    }
    if (err.hint) lines.push(`hint: ${err.hint}`);
    if (debug && err.stack) lines.push(err.stack);
    return { text: lines.join('\n'), exitCode: err.exitCode };
  }
  const message = err instanceof Error ? err.message : String(err);
  const lines = [`enrich: internal error: ${message} [INTERNAL]`];
  lines.push(
    debug && err instanceof Error && err.stack
      ? err.stack
      : 'Run again with --debug for details, and please report it.',
  );
  return { text: lines.join('\n'), exitCode: 1 };
}
