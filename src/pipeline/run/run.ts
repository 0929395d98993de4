import { join as joinPath } from 'node:path';
import { EnrichError } from '../../errors.js';
import { openJoinWriter, type JoinWriter } from '../join/join-writer.js';
import { RowIndex } from '../join/row-index.js';
import { createStreamJoin, type StreamJoin, type StreamJoinOptions } from '../join/stream-join.js';
import { writeJoinedFrom } from '../join/write-joined.js';
import {
  changedSinceEarlierRun,
  hasJournal,
  openJournal,
  runKey,
  type Journal,
} from '../journal/journal.js';
import type { BulkApi, LeafResult, ResolvedRun, RunProgress, StopReason } from '../types.js';
import type { BatchContext } from './batch-context.js';
import { stopAtBudget } from './batch-task.js';
import { balanceLog, type BalanceLog } from './balance.js';
import { createBudget } from './budget.js';
import { driveBatches, type Driven, type ProgressSink } from './drive.js';
import { INTERRUPTED_NOT_SENT, inputChanged, notSent } from './messages.js';
import type { PollEnv } from './poll.js';
import { createLimiter } from './submit.js';
import {
  countJobs,
  emptyStats,
  exitCodeFor,
  chargeUnknownRows,
  lastRemaining,
  strongerStop,
  sum,
  type RunSummary,
} from './summary.js';

export { exitCodeFor, type RunSummary } from './summary.js';

/** What a run uses but does not decide: the service, the clock, and where to report. */
export interface RunDeps {
  api: BulkApi;
  /** The service's base URL: a run belongs to one service (its origin is part of the run's identity). */
  baseUrl: string;
  env: PollEnv;
  onProgress?: (p: RunProgress) => void;
  /** What the user should know before the run spends anything (the input changed since an earlier run...). */
  onWarning?: (message: string) => void;
  /** Tuning of the one-pass join (defaults suit any service; tests make it spill). */
  join?: Partial<StreamJoinOptions>;
}

/** The key of a run: its kind, its input's content and the request options (with the service). */
export function runKeyOf(
  run: Pick<ResolvedRun, 'kind' | 'identity'>,
  input: { path: string; size: number; sha256: string },
  baseUrl: string,
): { key: string; options: Record<string, unknown> } {
  const options = { service: new URL(baseUrl).origin, ...run.identity };
  return { key: runKey(run.kind, input, options), options };
}

/** Runs a resolved bulk enrichment end to end: classify, submit, poll, spool, join, write. */
export async function runBulk(run: ResolvedRun, deps: RunDeps): Promise<RunSummary> {
  if (!URL.canParse(deps.baseUrl))
    throw new EnrichError('USAGE', `baseUrl must be a URL, got ${JSON.stringify(deps.baseUrl)}`);
  const input = await run.source.identity();
  const { key, options } = runKeyOf(run, input, deps.baseUrl);
  // A resumed run has the same content as when it started: what a new run says and
  // checks below was said and checked then.
  if (run.restart || !(await hasJournal(run.runsDir, key))) {
    // Batches are sent while the file is still being read: a malformed line near its end
    // would stop the run after paying for the rows above it, and fixing the file makes a
    // new run that pays for them again. So a new run reads the whole file once first.
    await run.source.check();
    const header = { kind: run.kind, input, options };
    const earlier = await changedSinceEarlierRun(run.runsDir, key, header);
    if (earlier) deps.onWarning?.(inputChanged(run.source.name, earlier.at));
  }
  const journal = await openJournal({
    runsDir: run.runsDir,
    key,
    restart: run.restart,
    now: deps.env.now,
    header: { kind: run.kind, input, options, command: run.command },
  });
  try {
    return await runWithJournal(run, deps, journal, key);
  } finally {
    await journal.close();
  }
}

/** The run's progress counters, reported through `onProgress`. */
function progressSink(deps: RunDeps): ProgressSink {
  const progress: RunProgress = {
    phase: 'reading',
    rowsRead: 0,
    jobsTotal: 0,
    jobsDone: 0,
    creditsCharged: 0,
    rowsWritten: 0,
  };
  return { progress, emit: () => deps.onProgress?.({ ...progress }) };
}

/** The shared context of the run's batches, and the run's one stop reason. */
function batchContext(
  run: ResolvedRun,
  deps: RunDeps,
  journal: Journal,
  join: StreamJoin | undefined,
) {
  let stopReason: StopReason | undefined;
  const ctx: BatchContext = {
    kind: run.kind,
    metadata: run.metadata,
    journal,
    api: deps.api,
    env: deps.env,
    deadline: deps.env.now() + run.timeoutMs,
    wait: run.wait,
    resendUnconfirmed: run.resendUnconfirmed,
    words: run.words,
    balance: balanceLog(),
    budget: createBudget(run.maxCredits, run.creditsPerRow),
    limit: createLimiter(run.concurrency),
    stopped: () =>
      deps.env.signal?.aborted
        ? INTERRUPTED_NOT_SENT
        : stopReason && `not sent: ${stopReason.message}`,
    stop: (code, message) => {
      stopReason = strongerStop(stopReason, { code, message });
    },
    spooled: join && ((id, records) => join.spooled(id, records)),
  };
  return { ctx, stopReason: () => stopReason };
}

async function runWithJournal(
  run: ResolvedRun,
  deps: RunDeps,
  journal: Journal,
  key: string,
): Promise<RunSummary> {
  const sink = progressSink(deps);
  const openOutput = () =>
    openJoinWriter({
      ...run,
      onRow: () => {
        if (++sink.progress.rowsWritten % 10_000 === 0) sink.emit();
      },
    });
  // Waiting for the results, rows are written as their batches come back (the one-pass
  // join, see stream-join.ts); without waiting, the output is written only if every job
  // is done at the end.
  let out = run.wait ? await openOutput() : undefined;
  try {
    const reps = new RowIndex();
    const join = out && openStreamJoin(run, deps, { journalDir: journal.dir, reps }, out);
    const { ctx, stopReason } = batchContext(run, deps, journal, join);
    const driven = await driveBatches(run, ctx, { join, sink, reps });
    if (driven.overBudget > 0) stopAtBudget(ctx);
    sink.progress.phase = 'waiting';
    sink.emit();
    const leaves = (await Promise.all(driven.tasks)).flat().sort((a, b) => a.first - b.first);
    if (deps.env.signal?.aborted)
      throw new EnrichError('INTERRUPTED', 'interrupted; the journal is saved');
    const base = summaryBase(journal, key, driven, leaves, stopReason(), ctx.balance);
    // Not waiting: finish only when every job is already done; else report the jobs.
    if (!run.wait && base.jobs.pending > 0)
      return { ...base, ...emptyStats(), written: false, secondPassFrom: null, exitCode: 0 };
    sink.progress.phase = 'writing';
    sink.emit();
    out ??= await openOutput();
    const final = { leaves, dupCounts: driven.dupCounts, notSent: notSent(base.stopReason) };
    const stats = join
      ? await join.finish(final)
      : await writeAllAtOnce(run, journal, driven, final, out);
    out = undefined; // closed: nothing to abort any more
    await journal.append({ t: 'done', output: run.output.target });
    const exitCode = exitCodeFor(stats, base.jobs, base.stopReason);
    return { ...base, ...stats, written: true, exitCode };
  } catch (err) {
    await out?.abort().catch(() => undefined);
    throw err;
  }
}

/** The one-pass join of a run that waits for its results. */
function openStreamJoin(
  run: ResolvedRun,
  deps: RunDeps,
  store: { journalDir: string; reps: RowIndex },
  out: JoinWriter,
) {
  return createStreamJoin({ ...run, ...store }, out, {
    // Room for the batches in flight plus two being filled: the reader keeps the service
    // busy without holding more rows (memory) than that.
    windowRows: Math.min(32_768, Math.max(4096, (run.concurrency + 2) * run.batchSize)),
    keepOutcomes: Math.max(1024, run.batchSize),
    headWaitMs: 5000,
    ...deps.join,
  });
}

/** A run that did not wait, with every job done: the whole output in one pass over the input. */
async function writeAllAtOnce(
  run: ResolvedRun,
  journal: Journal,
  driven: Driven,
  final: { leaves: LeafResult[]; dupCounts: Map<number, number>; notSent: string },
  out: JoinWriter,
) {
  const source = { ...run, journalDir: journal.dir, reps: driven.reps };
  await writeJoinedFrom({ ...source, ...final }, out, 0);
  return { ...(await out.close()), secondPassFrom: 0 };
}

/** What every summary of the run says, written or not. */
function summaryBase(
  journal: Journal,
  key: string,
  driven: Driven,
  leaves: LeafResult[],
  stopReason: StopReason | undefined,
  balance: BalanceLog,
) {
  const seen = balance.report();
  const earlier = sum(leaves, (l) => l.creditsEarlier ?? 0);
  return {
    runKey: key,
    journal: journal.path,
    resumed: journal.resumed,
    rows: driven.reps.length,
    valid: driven.valid,
    duplicates: driven.duplicates,
    jobs: countJobs(leaves, (b) => journal.state.batches.get(b)?.expires),
    requests: { submits: sum(leaves, (l) => l.submits), polls: sum(leaves, (l) => l.polls) },
    creditsCharged: sum(leaves, (l) => l.credits) - earlier,
    creditsChargedEarlier: earlier,
    unconfirmedRows: sum(leaves, (l) => (l.state === 'unconfirmed' ? l.count : 0)),
    chargeUnknownRows: sum(leaves, chargeUnknownRows),
    // The last figure the service sent (this run's; else the journal's, of a resumed job).
    remainingCredits: seen?.last.remaining ?? lastRemaining(leaves),
    remainingCreditsAt: seen?.last.at ?? null,
    balance: seen && { first: seen.first.remaining, last: seen.last.remaining, drop: seen.drop },
    stopReason,
  };
}

/** The directory of run journals under a state dir. */
export function runsDirOf(stateDir: string): string {
  return joinPath(stateDir, 'runs');
}
