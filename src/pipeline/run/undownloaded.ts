import { jobsOfRun } from '../journal/jobs.js';
import { foldEvents, parseJournal } from '../journal/journal.js';

/**
 * Job states a resume still picks up: a job accepted and not yet downloaded (nor expired),
 * a batch whose POST may have been sent (`submitting`) or that the service never confirmed.
 */
const NOT_DOWNLOADED = new Set(['running', 'submitting', 'unconfirmed']);

/**
 * True when a run's journal holds a job its resume would download (or a batch it would
 * resend with `--resend-unconfirmed`), whatever its output: a run stopped by `--timeout`
 * wrote its output with those rows `failed`, and erasing it would have them paid for again.
 * For the retention sweeps (cache/retention.ts), once per run, never per row.
 */
export function holdsUndownloadedJobs(journalText: string, now: number): boolean {
  const state = foldEvents(parseJournal(journalText));
  if (!state) return false;
  const run = { key: '', dir: '', state, modifiedAt: now };
  return jobsOfRun(run, now).some((j) => NOT_DOWNLOADED.has(j.status));
}
