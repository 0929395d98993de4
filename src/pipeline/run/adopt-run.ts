import { ApiError } from '../../errors.js';
import {
  hasJournal,
  journalAccount,
  optionsWithout,
  peekRun,
  runsMatching,
  sameInput,
  type RunState,
} from '../journal/journal.js';
import type { InputIdentity } from '../../io/read.js';
import type { BulkApi, BulkKind } from '../types.js';
import { keptJob } from './earlier-runs.js';

/** What looking for a run to take over needs. */
export interface AdoptContext {
  runsDir: string;
  /** This run's key (with this key's account): when it has a journal, it is resumed as it is. */
  key: string;
  kind: BulkKind;
  input: InputIdentity;
  /** This run's options, with its service and account. */
  options: Record<string, unknown>;
  /** The client's account (a hash of its key), as RunDeps gives it. */
  account: string;
  api: BulkApi;
  now: () => number;
}

/**
 * The key of a run of the same input, kind, options and service journaled under
 * another account hash (an earlier key, or an earlier build that journaled no account) that
 * this key may resume, or undefined (this run is its own, as before). Finished or not: a run
 * stopped by a revoked key wrote its output, and its rows still to send are sent by the resume,
 * its rows paid for are not bought again. A run is its key's; a
 * rotated key of the same account is told from another account's by asking the service about
 * one of the run's jobs with this key (GET of its results, api-spec.md 4.5/4.6): a 200 or 202
 * shows that this key reads that job (the service itself shows it the results), so resuming
 * serves it nothing the service would not. A 4xx answer (401, 403, 404...): not this key's
 * to read, the next candidate is looked at. A job past its expiry is never asked about (its
 * 404 would prove nothing); a run with no job left to ask about is not taken over. Any other
 * failure (network, 5xx, 429 after the client's retries) stops the run before it sends
 * anything: deciding without an answer would pay again for what the earlier key paid.
 * A key that took a run over once is journaled (`adopted`): that run is its run from then on,
 * as it is the earlier key's, and the service is not asked again.
 */
export async function adoptableRun(c: AdoptContext): Promise<string | undefined> {
  if (await hasJournal(c.runsDir, c.key)) return undefined;
  const mine = journalAccount(c.account);
  const options = optionsWithout(c.options, 'account');
  const candidates = await runsMatching(
    c.runsDir,
    c.key,
    (h) =>
      h.kind === c.kind &&
      h.options.account !== mine &&
      sameInput(h.input, c.input) &&
      optionsWithout(h.options, 'account') === options,
  );
  for (const header of candidates) {
    const state = await peekRun(c.runsDir, header.run);
    if (!state) continue;
    // Taken over by this account once: its run from then on.
    if (state.adopted?.includes(mine)) return header.run;
    const job = jobToAsk(state, c.now());
    if (job && (await readsJob(c, job))) return header.run;
  }
  return undefined;
}

/** A job of the run the service still keeps: one not downloaded first (the one at stake). */
function jobToAsk(state: RunState, now: number) {
  const jobs = [...state.batches.values()].filter((b) => keptJob(b, now));
  return jobs.find((b) => !b.spooled) ?? jobs[0];
}

/** True when the service answers this key about the job (200 or 202); false on a 4xx. */
async function readsJob(c: AdoptContext, job: { job: string; url: string }): Promise<boolean> {
  try {
    await c.api.results(c.kind, job.job, job.url);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429)
      return false;
    throw err;
  }
}
