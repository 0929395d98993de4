/**
 * The lines of the --state log (JSON lines): a header, then one change per line. A job's
 * results are already JSON text, so they are written into the line as they are and cut out
 * of it again on replay, never parsed and re-serialised.
 */
import type { Job, StateEvent } from './store.js';

/** The first line of every state log. */
export interface StateHeader {
  t: 'meta';
  version: 2;
  admin_token: string;
}

const RESULTS = ',"results":';
const JOB_PREFIX = '{"t":"job",';

/** The header line of a log of the sandbox with this admin token. */
export function headerLine(adminToken: string): string {
  const header: StateHeader = { t: 'meta', version: 2, admin_token: adminToken };
  return `${JSON.stringify(header)}\n`;
}

/** The line of one change, in pieces (a job's results stay one string of their own). */
export function eventPieces(event: StateEvent): string[] {
  if (event.t !== 'job') return [`${JSON.stringify(event)}\n`];
  const { results, ...meta } = event.job;
  // `meta` has no "results" key and JSON.stringify escapes every quote inside strings, so the
  // first `,"results":` of the line is the one written here.
  const account = event.account ? `,"account":${JSON.stringify(event.account)}` : '';
  return [`${JOB_PREFIX}"job":${JSON.stringify(meta)}${account}${RESULTS}`, results, '}\n'];
}

/** Reads one line (without its newline); throws when it is not a whole line of the log. */
export function parseLine(text: string): StateEvent | StateHeader {
  if (text.startsWith(JOB_PREFIX)) {
    const at = text.indexOf(RESULTS);
    if (at < 0 || !text.endsWith(']}')) throw new Error('a job line without its results');
    const head = JSON.parse(`${text.slice(0, at)}}`) as { job: Omit<Job, 'results'> };
    const results = text.slice(at + RESULTS.length, -1);
    if (!results.startsWith('[')) throw new Error('a job line whose results are not an array');
    return { ...head, t: 'job', job: { ...head.job, results } } as StateEvent;
  }
  const value = JSON.parse(text) as { t?: unknown };
  if (value === null || typeof value !== 'object' || typeof value.t !== 'string')
    throw new Error('not a change of the state');
  if (!['meta', 'account', 'key', 'clock', 'drop'].includes(value.t))
    throw new Error(`unknown change "${value.t.slice(0, 40)}"`);
  return value as StateEvent | StateHeader;
}
