import type { LongWait } from '../api/client.js';
import { formatDuration } from '../config/duration.js';
import { printable } from './output.js';

/**
 * The warning for a 429 that asks for a long wait: what the service said, how long and until
 * when, and what the command does about it (`timeoutFlag`: the flag that sets how long it may
 * wait, when it has one). A Retry-After of hours is a quota (of jobs, of
 * stored results), not a rate limit: without this line a run would sit silent until then.
 */
export function longWaitLine(wait: LongWait, now: number, timeoutFlag?: string): string {
  const left = formatDuration(Math.max(0, wait.until - now));
  const at = new Date(wait.until).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const asks = `${printable(wait.message)}; the service asks to wait ${left} (until ${at})`;
  return wait.pastDeadline
    ? `${asks}, longer than this command may wait${timeoutFlag ? ` (${timeoutFlag})` : ''}: nothing more is sent to it now; run the same command after ${at}`
    : `${asks}: waiting (Ctrl-C stops; the same command resumes)`;
}
