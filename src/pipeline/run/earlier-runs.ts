import { EnrichError } from '../../errors.js';
import { earlierRunsOf, openJournal, type BatchState, type Journal } from '../journal/journal.js';
import { spoolAnswer } from '../journal/spool.js';
import type { BulkApi, BulkKind, ResultsCache } from '../types.js';
import { echoedItems, fillCache } from './cache-use.js';
import { pollJob, type PollEnv } from './poll.js';

/** What settling the earlier runs of an input needs. */
export interface EarlierRunsContext {
  runsDir: string;
  /** This run's key: never one of the earlier runs. */
  key: string;
  kind: BulkKind;
  input: { path: string; sha256: string };
  options: Record<string, unknown>;
  api: BulkApi;
  env: PollEnv;
  /** When to stop waiting for a job still running (the run's --timeout). */
  deadline: number;
  /** The results cache, bound to the run's service, account and request options. */
  cache: ResultsCache;
  onWarning?: ((message: string) => void) | undefined;
}

/** A batch accepted by the service and never downloaded, whose results may still be there at `now`. */
function notDownloaded(b: BatchState, now: number): boolean {
  return (
    // Stryker disable next-line ConditionalExpression,LogicalOperator: `accepted` journals the job and its address together: either test alone is the same
    b.job !== undefined &&
    // Stryker disable next-line ConditionalExpression: (likewise)
    b.url !== undefined &&
    !b.spooled &&
    !b.expired &&
    !b.failed &&
    b.splitSize === undefined &&
    !(typeof b.expires === 'number' && b.expires <= now)
  );
}

/**
 * An earlier run of the same file that stopped with jobs accepted and not downloaded (killed,
 * Ctrl-C, `--no-wait`, a --timeout), after which the file changed: its rows were paid for, and
 * this run, a new one (new content), would pay for them again. Before this run sends anything,
 * each such job is downloaded (waited for while it runs, until `deadline`), spooled into its
 * own run's journal as that run would have, and its answers kept in the results cache, where
 * this run's rows find them. A run going on in another process now is left to it. A job still
 * running at the deadline stops this run (PARTIAL, exit 3) before it sends anything.
 */
export async function settleEarlierRuns(c: EarlierRunsContext): Promise<void> {
  const earlier = await earlierRunsOf(c.runsDir, c.key, c);
  let waiting = 0;
  for (const header of earlier) {
    let journal: Journal;
    try {
      journal = await openJournal({
        runsDir: c.runsDir,
        key: header.run,
        // Stryker disable next-line ObjectLiteral: the journal is there already: its header is read, never written
        header: {
          kind: header.kind,
          input: header.input,
          options: header.options,
          command: header.command,
        },
        restart: false,
        now: c.env.now,
      });
    } catch (err) {
      // Going on in another process: left to it. Anything else is said, not passed over.
      if (!(err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS'))
        c.onWarning?.(
          `an earlier run of ${c.input.path} (before the file changed) cannot be opened to download the jobs it may have left (${(err as Error).message}): rows it sent may be paid for again`,
        );
      continue;
    }
    try {
      const now = c.env.now();
      const open = [...journal.state.batches.values()].filter((b) => notDownloaded(b, now));
      if (open.length === 0) continue;
      c.onWarning?.(
        `an earlier run of ${c.input.path} (before the file changed) left ${open.length} job(s) not downloaded: downloading them first, so the rows they paid for are not paid for again`,
      );
      const left = await Promise.all(open.map((b) => settleJob(c, journal, b)));
      waiting += left.filter((l) => l).length;
    } finally {
      await journal.close();
    }
  }
  if (waiting > 0)
    throw new EnrichError(
      'PARTIAL',
      `${waiting} job(s) of an earlier run of ${c.input.path} are still running: nothing was sent, so the rows they paid for are not paid for again`,
      { hint: 'Run the same command again later: their results are downloaded first.' },
    );
}

/** Downloads one job of an earlier run into its journal and the cache; true when it is still running. */
async function settleJob(c: EarlierRunsContext, journal: Journal, b: BatchState): Promise<boolean> {
  const outcome = await pollJob(() => c.api.results(c.kind, b.job!, b.url!), {
    deadline: c.deadline,
    env: c.env,
    expires: b.expires,
  });
  if (outcome.state === 'timeout') return true;
  if (outcome.state === 'expired') {
    await journal.append({ t: 'expired', batch: b.id });
    return false;
  }
  // Sent by another process: its balance is not known to have held while it ran (unsure).
  const { unsure } = await spoolAnswer(journal, b.id, outcome);
  const { records, remainingCredits } = outcome;
  // Rows it may have skipped for credits are no no-match to keep: read as the shortage's.
  const remaining = unsure ? 0 : remainingCredits;
  fillCache(c.cache, c.kind, echoedItems(c.kind, records), {
    records,
    remaining,
    at: c.env.now(),
  });
  return false;
}
