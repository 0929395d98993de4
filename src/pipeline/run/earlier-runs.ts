import { EnrichError } from '../../errors.js';
import {
  earlierRunsOf,
  runsMatching,
  openJournal,
  peekRun,
  type BatchState,
  type Journal,
} from '../journal/journal.js';
import { lockHolder } from '../journal/run-lock.js';
import { batchKeys } from '../journal/batch-keys.js';
import { spoolAnswer } from '../journal/spool.js';
import type { BulkApi, BulkKind, ResultsCache } from '../types.js';
import { echoedItems, fillCache } from './cache-use.js';
import { journaledFate } from './journaled-fate.js';
import { pollJob, type PollEnv } from './poll.js';

/** What settling the earlier runs of an input needs. */
export interface EarlierRunsContext {
  runsDir: string;
  /** This run's key: never one of the earlier runs. */
  key: string;
  kind: BulkKind;
  input: { path: string; sha256: string };
  /** The run's request options, with its service and account: only runs of the same are looked at. */
  options: Record<string, unknown>;
  /** This run's command (said in the hint when a run of the same file goes on now). */
  command: string;
  api: BulkApi;
  env: PollEnv;
  /** When to stop waiting for a job still running (the run's --timeout). */
  deadline: number;
  /**
   * The results cache, bound to the run's service, account and request options, where the
   * earlier runs' answers go. None (a run that neither reads nor writes it): nothing is
   * downloaded; a run of the same file going on now still stops this one.
   */
  cache?: ResultsCache | undefined;
  onWarning?: ((message: string) => void) | undefined;
  /**
   * Only these runs (by key), and their jobs still running waited for until `deadline`,
   * whatever file they read: runs that ended holding rows this run waited for (row-claims.ts).
   */
  only?: ReadonlySet<string> | undefined;
}

/** How long looking at the runs of other files may take at a run's start (their journals are read). */
export const OTHER_FILES_BUDGET_MS = 1_000;

/**
 * A batch the service accepted (a job and its address) whose results it may still keep at
 * `now`: not journaled expired, not past its expiry date.
 */
export function keptJob(
  b: BatchState,
  now: number,
): b is BatchState & { job: string; url: string } {
  return (
    // Stryker disable next-line ConditionalExpression,LogicalOperator: `accepted` journals the job and its address together: either test alone is the same
    b.job !== undefined &&
    // Stryker disable next-line ConditionalExpression: (likewise)
    b.url !== undefined &&
    !b.expired &&
    !(typeof b.expires === 'number' && b.expires <= now)
  );
}

/** A batch accepted by the service and never downloaded, whose results may still be there at `now`. */
export function notDownloaded(b: BatchState, now: number): boolean {
  return keptJob(b, now) && !b.spooled && !b.failed && b.splitSize === undefined;
}

/**
 * Earlier runs of the same kind, request options, service and account that stopped with jobs
 * accepted and not downloaded (killed, Ctrl-C, `--no-wait`, a --timeout): their rows were paid
 * for, and this run, a new one (new content, or another file), would pay for them again. Before
 * this run sends anything, each such job is downloaded, spooled into its own run's journal as
 * that run would have, and its answers kept in the results cache, where this run's rows find
 * them.
 *
 * - A run of the same file (before it changed): its jobs still running are waited for, until
 *   `deadline`; one still running then stops this run (PARTIAL, exit 3) before it sends
 *   anything. One going on in another process now stops this run (RUN_IN_PROGRESS, exit 2):
 *   its rows in flight would be paid twice (overlapping cron runs on a grown export).
 * - A run of another file (a dated export, leads-27.csv before leads-28.csv): one look at each
 *   job, no waiting (those still running are said, and left); one going on now is left to
 *   its process. These runs' journals are read within OTHER_FILES_BUDGET_MS at most.
 */
export async function settleEarlierRuns(c: EarlierRunsContext): Promise<void> {
  const started = performance.now();
  // Runs that held rows of this one fill the same cache entries (a claim names the cache's
  // scope): whatever columns their files had, their answers are this run's to take.
  const only = c.only;
  const earlier = only
    ? await runsMatching(c.runsDir, c.key, (h) => only.has(h.run) && h.kind === c.kind)
    : await earlierRunsOf(c.runsDir, c.key, c);
  let waiting = 0;
  for (const header of earlier) {
    // An earlier run of this very file (its rows held back, not another run's to settle).
    const sameFile = !only && header.input.path === c.input.path && c.input.path !== '-';
    if (!sameFile && !only) {
      // Stryker disable next-line ConditionalExpression,EqualityOperator: past the budget the rest are left for the next start (a test would need a slow disk; `>=` differs only at the very millisecond)
      if (!c.cache || performance.now() - started > OTHER_FILES_BUDGET_MS) continue;
      // Read without its lock first: most runs of other files left nothing to download. Whether
      // it wrote its output says nothing here: one stopped by --timeout did, its jobs running.
      const peeked = await peekRun(c.runsDir, header.run);
      const now = c.env.now();
      const left = (b: BatchState) => notDownloaded(b, now) || unanswered(b);
      if (!peeked || ![...peeked.batches.values()].some(left)) continue;
    }
    const what = only
      ? `the run of ${header.input.path} that held rows of this file`
      : sameFile
        ? `an earlier run of ${c.input.path} (before the file changed)`
        : `an earlier run of ${header.input.path}`;
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
      if (err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS') {
        if (sameFile) throw runningNow(c, err);
        continue; // another file's run going on now: left to it
      }
      c.onWarning?.(
        `${what} cannot be opened to download the jobs it may have left (${(err as Error).message}): rows it sent may be paid for again`,
      );
      continue;
    }
    try {
      if (!c.cache) continue;
      await markUnanswered(c.cache, journal, c.env.now());
      const now = c.env.now();
      const open = [...journal.state.batches.values()].filter((b) => notDownloaded(b, now));
      if (open.length === 0) continue;
      c.onWarning?.(
        `${what} left ${open.length} job(s) not downloaded: downloading them first, so the rows they paid for are not paid for again`,
      );
      const deadline = sameFile || only ? c.deadline : now;
      const left = await Promise.all(open.map((b) => settleJob(c, c.cache!, journal, b, deadline)));
      const running = left.filter((l) => l).length;
      if (sameFile) waiting += running;
      else if (running > 0)
        c.onWarning?.(
          `${running} job(s) of ${what} are still running: rows of this file they hold may be paid for again (to avoid it, wait for them to end, or run: ${header.command})`,
        );
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

/**
 * A run of the same file (before it changed) goes on in another process now: this one stops
 * (`err`, the RUN_IN_PROGRESS of its lock, names the pid). Also verify-emails' refusal.
 */
export function runningNow(
  c: Pick<EarlierRunsContext, 'input' | 'command'>,
  err: EnrichError,
): EnrichError {
  const { who, details } = lockHolder(err);
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `${who} is running ${c.input.path} as it was before it changed, with the same options: nothing was sent, so the rows it has in flight are not paid for twice`,
    {
      cause: err,
      ...(details ? { details } : {}),
      hint: `Wait for it to finish, then run again (the rows it paid for come from the results cache): ${c.command}`,
    },
  );
}

/**
 * A batch whose POST may have reached the service with no answer ever seen (the run died while
 * it was on the wire, or it ended unconfirmed): its resume does not send it again by itself.
 */
export function unanswered(b: BatchState): boolean {
  return journaledFate(b, false) === 'unconfirmed';
}

/**
 * Marks in the cache the requests of an earlier run's batches sent with no answer (by the keys
 * that run kept before each POST, batch-keys.ts): this run does not send them by itself, as
 * that run's resume would not (a run that lived to see its POST unanswered marked them then).
 */
async function markUnanswered(cache: ResultsCache, journal: Journal, now: number): Promise<void> {
  if (!cache.markStored) return;
  let marked = 0;
  for (const b of journal.state.batches.values()) {
    if (!unanswered(b)) continue;
    for (const key of await batchKeys(journal.dir, b.id)) {
      cache.markStored(key, b.sentAt ?? now);
      marked++;
    }
  }
  // The rows are looked up next: a put is seen once committed.
  if (marked > 0) await cache.committed?.();
}

/** Downloads one job of an earlier run into its journal and the cache; true when it is still running. */
async function settleJob(
  c: EarlierRunsContext,
  cache: ResultsCache,
  journal: Journal,
  b: BatchState,
  deadline: number,
): Promise<boolean> {
  const outcome = await pollJob(() => c.api.results(c.kind, b.job!, b.url!, c.env.signal), {
    deadline,
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
  fillCache(cache, c.kind, echoedItems(c.kind, records), {
    records,
    remaining,
    at: c.env.now(),
  });
  return false;
}
