import type { RunWords } from '../types.js';
import { isoSecond, resumeBy } from './poll.js';

/**
 * The one table of what a run says about its rows and its stops: the texts of the
 * output's `enrich_error` and of the summary's stop reason. The run hands over the
 * facts (job id, expiry, the limit); `words` names how to act on them, so a library
 * caller is told about its options and a CLI user about flags.
 */

export { LIBRARY_WORDS } from '../words.js';

/** A row an earlier attempt of the run took from the results cache, whose answer is no longer there. */
export const CACHED_ANSWER_GONE =
  'not sent: an earlier attempt of this run took this row from the results cache, and the answer went while this run ran (the cache was cleared or pruned meanwhile); running the same command again sends it (and pays for it)';

/** The spending limit is reached: the stop reason, and the tail of unsent rows' errors. */
export function budgetReached(words: RunWords, limit: number | undefined): string {
  return `${words.option('maxCredits')} ${limit ?? 0} reached`;
}

/** A job's results were deleted before they were downloaded. */
export function resultsExpired(words: RunWords, jobId: string | undefined): string {
  return `results of job ${jobId ?? '?'} expired before they were downloaded; ${words.restart} to enrich these rows again (costs credits)`;
}

/** A job's results could not be downloaded this time (they still can be, before `expires`). */
export function notDownloaded(
  words: RunWords,
  jobId: string,
  why: string,
  expires: number | null | undefined,
  now: number,
): string {
  return `results of job ${jobId} not downloaded: ${why}; ${words.resume} to resume${resumeBy(expires, now)}`;
}

/** A job was still running when the run stopped waiting (or, `wait` false, at its one look). */
export function stillRunning(
  words: RunWords,
  jobId: string,
  wait: boolean,
  expires: number | null | undefined,
  now: number,
  notFoundSince?: number,
): string {
  const by = resumeBy(expires, now);
  if (notFoundSince !== undefined) {
    const since = isoSecond(notFoundSince);
    return `job ${jobId} answered 404 (not found) at every poll since ${since}, before its results were due to expire; ${words.resume} to ask again${by}`;
  }
  return wait
    ? `job ${jobId} was still running at ${words.option('timeoutMs')}; ${words.resume} to resume${by}`
    : `job ${jobId} is still running; ${words.resume} to fetch its results${by}`;
}

/**
 * The error of a contact a job's answer left out because the request asked only for contacts
 * with a work email or a mobile phone (api-spec 4.1: only those are returned); undefined when
 * it asked for every contact.
 */
export function leftOutByFilter(
  words: RunWords,
  metadata: Readonly<Record<string, unknown>>,
): string | undefined {
  const only: string[] = [];
  if (metadata.business_email_exists === true)
    only.push(`a work email (${words.option('requireEmail')})`);
  if (metadata.mobile_phone_exists === true)
    only.push(`a mobile phone (${words.option('requireMobile')})`);
  if (only.length === 0) return undefined;
  return `not returned: the service returns only contacts with ${only.join(' and ')}`;
}

/** The error of a row that was never sent. */
export function notSent(stop: { message: string } | undefined): string {
  return stop ? `not sent: ${stop.message}` : 'not sent';
}

/** The run was interrupted before this row was sent. */
export const INTERRUPTED_NOT_SENT = 'not sent: the run was interrupted';

/** A batch whose POST failed: its rows were not enriched. */
export function notEnriched(message: string): string {
  return `not enriched: ${message}`;
}

/**
 * A row whose request a run sent without getting its answer (a mark in the results cache,
 * cache-use.ts): not sent again by another run either, unless asked.
 */
export function unconfirmedEarlier(words: RunWords, at: number): string {
  return `not sent: an enrich run sent this row at ${isoSecond(at)} and its answer never came (the service may have charged it), so it is not sent again by itself; ${words.option('resendUnconfirmed')} sends it again (which may charge it twice)`;
}

/** A batch whose POST may have reached the service, which never confirmed it. */
export function unconfirmed(words: RunWords, why: string): string {
  return `not confirmed: the service may have received and charged these rows, but its answer was lost (${why}); it has not shown that it honours idempotency keys, so they are sent again only when asked to with ${words.option('resendUnconfirmed')} (which may charge them twice)`;
}

/**
 * Rows of a job this run sent that came back not charged and without data while the balance
 * rose (a top-up or refill) between its submission and its download: the answer cannot tell a
 * no-match from a row skipped for credits, so they are sent once more by the next run.
 */
export function mayBeOutOfCredits(words: RunWords, jobId: string | undefined): string {
  return `not enriched, perhaps for lack of credits: the balance rose while job ${jobId ?? '?'} ran, so its answer cannot tell a missing match from a row skipped for credits; ${words.resume} to send these rows once more`;
}

/** The account ran out of credits (read from a job's records). */
export const OUT_OF_CREDITS = 'the account ran out of credits';

/** Before a new run of a file that changed since an earlier run with the same options. */
export function inputChanged(name: string, at: number): string {
  return `${name} changed since a run of it started ${new Date(at).toISOString()}: this is a new run, and every valid row is sent and paid for again, also those that run enriched. To pay only for new rows, put them in a file of their own; to finish that run, run it on the file as it was.`;
}

/**
 * A job answered 404 before its results were due to expire (said once a run): it is polled again
 * until `until` (epoch ms), and only a 404 then makes its results count as expired.
 */
export function notFoundYet(jobId: string, until: number): string {
  return `job ${jobId} answered 404 (not found) before its results were due to expire: it is taken as still running, and its results count as expired only if it still answers 404 at ${isoSecond(until)} (api-spec.md lists 404 without saying when it comes: a service may not know a new job yet)`;
}

/**
 * A row another enrich process was still sending when this run's time was up: not sent by this
 * one (its answer goes to the results cache, where the next run takes it).
 */
export function heldAtTimeout(pid: number, timeout: string, ended = false): string {
  if (ended)
    return `not sent: the job of a run that ended (pid ${pid}) was still looking this row up when this run's time was up (${timeout}); run again to take its answer from the results cache`;
  return `not sent: another enrich process (pid ${pid}) was still looking this row up when this run's time was up (${timeout}); run again to take its answer from the results cache`;
}

/** Said when a run first waits for rows another run is sending. */
export function waitingForRows(pid: number): string {
  return `waiting for another enrich process (pid ${pid}), which is sending rows this file holds too: their answers are then taken from the results cache instead of being paid for twice`;
}
