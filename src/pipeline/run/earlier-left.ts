import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { batchKeys } from '../journal/batch-keys.js';
import { earlierRunsOf, peekRun } from '../journal/journal.js';
import { runLockInUse } from '../journal/run-lock.js';
import type { CachedAnswer, ResultsCache } from '../types.js';
import { marked } from './cache-use.js';
import { notDownloaded, OTHER_FILES_BUDGET_MS, unanswered } from './earlier-runs.js';
import { ENDED_SUFFIX, endedRunKeys } from './ended-claims.js';
import { ROW_CLAIMS_DIR } from './row-claims.js';

/**
 * What the earlier runs of other files (and of this file before it changed) leave to a new
 * run's start, as `--dry-run` reads it (earlier-runs.ts does it for a real run): jobs the
 * service accepted and no run downloaded, whose answers that start puts in the results cache,
 * and batches a run that died sent with no answer, whose requests that start marks. Each by
 * the requests' store keys, kept beside the journal before the POST (batch-keys.ts).
 */
export interface EarlierLeft {
  /** Requests of jobs not downloaded (that may still be kept): downloaded first, not paid again. */
  inJobs: Set<string>;
  /** Requests a run that died sent with no answer, with when: marked first, not sent. */
  unanswered: Map<string, number>;
}

/** What reading the earlier runs needs: as settleEarlierRuns (the same runs, the same budget). */
export interface EarlierLeftContext {
  runsDir: string;
  /** The run's key: never one of the earlier runs. */
  key: string;
  kind: string;
  /** The run's request options, with its service and account. */
  options: Record<string, unknown>;
  input: { path: string };
  now: number;
  /** How long reading other files' runs may take (the real run's start allows as long). */
  budgetMs?: number;
}

/**
 * The requests earlier runs of the same kind, options, service and account left to this run's
 * start, read without their locks; runs a live process holds are left out (the real run leaves
 * them to that process too). A run of another file is read within the budget, as the real run's
 * start reads them.
 */
export async function earlierLeft(c: EarlierLeftContext): Promise<EarlierLeft> {
  const started = performance.now();
  const left: EarlierLeft = { inJobs: new Set(), unanswered: new Map() };
  for (const header of await earlierRunsOf(c.runsDir, c.key, c)) {
    const sameFile = header.input.path === c.input.path && c.input.path !== '-';
    // Stryker disable next-line ConditionalExpression,EqualityOperator: past the budget the rest are left (as the real start leaves them)
    if (!sameFile && performance.now() - started > (c.budgetMs ?? OTHER_FILES_BUDGET_MS)) continue;
    const state = await peekRun(c.runsDir, header.run);
    // Stryker disable next-line OptionalChaining,ArrayDeclaration: a journal whose header was just read folds to a state (gone meanwhile: nothing)
    const batches = [...(state?.batches.values() ?? [])];
    const jobs = batches.filter((b) => notDownloaded(b, c.now));
    const lost = batches.filter(unanswered);
    // Stryker disable next-line ConditionalExpression: a run that left nothing adds no key either way (this spares the look at its lock)
    if (jobs.length + lost.length === 0) continue;
    const dir = join(c.runsDir, header.run);
    if (await runLockInUse(dir, header.command)) continue;
    for (const b of jobs) for (const k of await batchKeys(dir, b.id)) left.inJobs.add(k);
    for (const b of lost)
      for (const k of await batchKeys(dir, b.id)) left.unanswered.set(k, b.sentAt ?? c.now);
  }
  await endedLeft(c, left.inJobs);
  return left;
}

/**
 * Adds the rows runs of any options hold past their end (ended-claims.ts): the real run finds
 * them claimed, and settles those runs' jobs before it would send them.
 */
async function endedLeft(c: EarlierLeftContext, inJobs: Set<string>): Promise<void> {
  const dir = join(c.runsDir, ROW_CLAIMS_DIR);
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    if (!n.endsWith(ENDED_SUFFIX) || n === `${c.key}${ENDED_SUFFIX}`) continue;
    const run = n.slice(0, -ENDED_SUFFIX.length);
    for (const k of await endedRunKeys(c.runsDir, run, c.now)) inJobs.add(k);
  }
}

/**
 * The cache as the run reads it once its start settled the earlier runs: a request of a job not
 * downloaded reads as a fresh answer (`inJob` tells those apart: they are counted apart), one sent
 * with no answer as a mark (cache-use.ts `marked`). Writes nothing.
 */
export function withEarlierLeft(
  cache: ResultsCache,
  left: EarlierLeft,
  at: number,
): { cache: ResultsCache; inJob: (answer: CachedAnswer) => boolean } {
  // A cache that names no store keys (one of a library user's) cannot be matched: read as it is.
  if (!cache.claimKey) return { cache, inJob: () => false };
  const storeKey = (requestKey: string) => cache.claimKey!(requestKey);
  const fromJobs = new WeakSet<CachedAnswer>();
  const view = Object.create(cache) as ResultsCache;
  view.get = (requestKey) => {
    const key = storeKey(requestKey);
    if (left.inJobs.has(key)) {
      const answer: CachedAnswer = { records: [], at, charged: false };
      fromJobs.add(answer);
      return answer;
    }
    const found = cache.get(requestKey);
    const sent = left.unanswered.get(key);
    return (sent !== undefined && marked(found, sent)) || found;
  };
  return { cache: view, inJob: (answer) => fromJobs.has(answer) };
}
