import { ApiError, EnrichError, formatLocation } from '../errors.js';
import { printable } from './output.js';

/** Turns any thrown value into the stderr text and exit code the user sees (never a stack trace unless --debug). */
export function describeError(err: unknown, debug: boolean): { text: string; exitCode: number } {
  if (err instanceof EnrichError) {
    const where = formatLocation(err.location);
    const lines = [`enrich: ${err.message}${where ? ` (${where})` : ''} [${err.code}]`];
    if (err instanceof ApiError) {
      for (const fe of err.fieldErrors) lines.push(`  ${fe.path}: ${fe.message}`);
    }
    const noEndpoint = err instanceof ApiError && isNoEndpoint(err);
    const hint = err.hint ?? (noEndpoint ? baseUrlHint(err.path) : undefined);
    if (hint) lines.push(`hint: ${hint}`);
    if (debug && err.stack) lines.push(err.stack);
    return { text: printable(lines.join('\n')), exitCode: err.exitCode };
  }
  const message = err instanceof Error ? err.message : String(err);
  const lines = [`enrich: internal error: ${message} [INTERNAL]`];
  lines.push(
    debug && err instanceof Error && err.stack
      ? err.stack
      : 'Run again with --debug for details, and please report it.',
  );
  return { text: printable(lines.join('\n')), exitCode: 1 };
}

/**
 * What to check when the service has no endpoint the tool calls (a POST answered 404), naming
 * that endpoint (`/contacts` for a contacts file, `/email-verification`...).
 */
export function baseUrlHint(endpoint: string): string {
  return `check the base URL (--base-url, ENRICH_BASE_URL or \`enrich config get base_url\`): it is the address the endpoints hang from, so that POST <base URL>${endpoint} reaches the service`;
}

/** A POST answered 404: the service has no such endpoint (api-spec.md lists 404 only for results). */
export function isNoEndpoint(err: { code: string; method?: string }): boolean {
  return err.code === 'API_NOT_FOUND' && err.method === 'POST';
}
