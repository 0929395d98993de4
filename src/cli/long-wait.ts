import type { LongWait } from '../api/client.js';
import { formatDuration } from '../config/duration.js';

/** Text a service sent, fit for a terminal: control characters (escape sequences) as `?`. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/**
 * The warning for a 429 that asks for a long wait: what the service said, how long and until
 * when, and what the command does about it. A Retry-After of hours is a quota (of jobs, of
 * stored results), not a rate limit: without this line a run would sit silent until then.
 */
export function longWaitLine(wait: LongWait, now: number): string {
  const left = formatDuration(Math.max(0, wait.until - now));
  const at = new Date(wait.until).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const asks = `${printable(wait.message)}; the service asks to wait ${left} (until ${at})`;
  return wait.pastDeadline
    ? `${asks}, longer than this command may wait (--timeout): nothing more is sent to it now; run the same command after ${at}`
    : `${asks}: waiting (Ctrl-C stops; the same command resumes)`;
}
