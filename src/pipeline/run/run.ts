import { join as joinPath } from 'node:path';
import { EnrichError } from '../../errors.js';
import type { InputIdentity, InputRow } from '../../io/read.js';
import { openJoinWriter, type JoinWriter } from '../join/join-writer.js';
import { RowIndex } from '../join/row-index.js';
import { SameRequests } from '../join/same-request.js';
import { createStreamJoin, type StreamJoin, type StreamJoinOptions } from '../join/stream-join.js';
import { writeJoinedFrom, type JoinSource } from '../join/write-joined.js';
import {
  discardNewIfThrows,
  journalAccount,
  openJournal,
  runKey,
  type Journal,
  type RunState,
} from '../journal/journal.js';
import { keepBatchKeys } from '../journal/batch-keys.js';
import { claimOutput, refuseOutputInUse } from '../journal/output-lock.js';
import { startsAfresh } from '../journal/renew.js';
import { refuseUnsettledSibling } from './cache-sibling.js';
import { validateRow } from '../mapping/validate.js';
import type {
  BulkApi,
  JobEvent,
  LeafResult,
  ResolvedRun,
  ResultsCache,
  SentItem,
  RunProgress,
  StopReason,
} from '../types.js';
import type { BatchContext } from './batch-context.js';
import { stopAtBudget } from './batch-task.js';
import { balanceLog, type BalanceLog } from './balance.js';
import { createBudget } from './budget.js';
import { driveBatches, type Driven, type ProgressSink } from './drive.js';
import { adoptableRun } from './adopt-run.js';
import { settleEarlierRuns } from './earlier-runs.js';
import {
  cacheLookup,
  cachedOutcome,
  fillCache,
  markUnconfirmed as markUnconfirmedIn,
  withoutMarks,
} from './cache-use.js';
import type { CacheLookup } from './cache-hits.js';
import { refillGone, takeResent, type RefillClaims, type Resent } from './refill.js';
import { runClaims, type ResendTo } from './run-claims.js';
import {
  CACHED_ANSWER_GONE,
  INTERRUPTED_NOT_SENT,
  leftOutByFilter,
  notFoundYet,
  notSent,
} from './messages.js';
import type { PollEnv } from './poll.js';
import { flightGate, REQUESTS_IN_FLIGHT, windowRows, type FlightGate } from './flight-gate.js';
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
  /** Told what happens to each job (submitted, running, done, sent again): `enrich -v`'s lines. */
  onJob?: (event: JobEvent) => void;
  /**
   * The account the run's key belongs to, as the client names it (`client.account`, a hash of
   * the key; hashed again here, never stored as given): part of the run's identity, so one
   * account's journal (its paid answers, jobs and balance) is never another account's run.
   * None (a library caller's `{ api }` without one): journals are keyed as by earlier builds.
   */
  account?: string | undefined;
  /** What the user should know before the run spends anything (the input changed since an earlier run...). */
  onWarning?: (message: string) => void;
  /**
   * The results cache, bound to this run's service, account and request options (none: every
   * valid row is sent). `run.cache` says whether it is read and written.
   */
  cache?: ResultsCache;
  /** Tuning of the one-pass join (defaults suit any service; tests make it spill). */
  join?: Partial<StreamJoinOptions>;
  /**
   * Told once when the run has to wait for the service rather than for its own work (a job
   * kept the reader waiting more than a second with its rows held): spare CPU from then on.
   */
  onServiceBound?: () => void;
}

/**
 * The key of a run: its kind, its input's content and the request options, with the service
 * and the account (a hash of the client's account, itself a hash of the key) when known.
 */
export function runKeyOf(
  run: Pick<ResolvedRun, 'kind' | 'identity'>,
  input: InputIdentity,
  baseUrl: string,
  account?: string,
): { key: string; options: Record<string, unknown> } {
  const options = {
    service: new URL(baseUrl).origin,
    ...(account ? { account: journalAccount(account) } : {}),
    ...run.identity,
  };
  return { key: runKey(run.kind, input, options), options };
}

/** Runs a resolved bulk enrichment end to end: classify, submit, poll, spool, join, write. */
export async function runBulk(run: ResolvedRun, given: RunDeps): Promise<RunSummary> {
  const deps = depsOf(run, given);
  const input = await run.source.identity();
  const { key, options } = runKeyOf(run, input, deps.baseUrl, deps.account);
  const renews = (found: RunState) =>
    startsAfresh(found, run.cache, { now: deps.env.now(), cache: deps.cache !== undefined });
  // The same file's run with another cache setting (--refresh, --no-cache) left paid jobs.
  await refuseUnsettledSibling({
    runsDir: run.runsDir,
    key,
    kind: run.kind,
    input,
    options,
    restart: run.restart,
    resumes: (own) => !renews(own),
    now: deps.env.now,
    words: run.words,
  });
  // Jobs an earlier run of this file (before it changed) or of another file left not
  // downloaded: their answers go to the cache first, so their rows are not paid for again.
  // A run of this file going on now (the file grew since it started) stops this one first.
  const earlier = {
    runsDir: run.runsDir,
    key,
    kind: run.kind,
    input,
    options,
    command: run.command,
    api: deps.api,
    env: deps.env,
    deadline: deps.env.now() + run.timeoutMs,
    cache: run.cache.read && run.cache.write ? deps.cache : undefined,
    onWarning: deps.onWarning,
  };
  await settleEarlierRuns(earlier);
  // So does another run going on now that writes the same output file.
  await refuseOutputInUse({
    runsDir: run.runsDir,
    key,
    target: run.output.target,
    command: run.command,
    as: run.words.option('output'),
  });
  // Batches are sent while the file is still being read, with no pass over the whole file
  // first: a line malformed near its end stops the run after the batches above it were
  // sent, and those are downloaded into the results cache before it stops (driveBatches),
  // so the fixed file's run (new content, a new run) finds them there and pays only for
  // the rest.
  // An unfinished run of this file under another key of the same account (rotated) is resumed.
  const adopted = await adoptedRun(run, deps, { key, input, options });
  const journal = await openJournal({
    runsDir: run.runsDir,
    key: adopted ?? key,
    restart: run.restart,
    now: deps.env.now,
    header: { kind: run.kind, input, options, command: run.command },
    // A finished run is not resumed under --refresh, nor once past the max age.
    renew: renews,
  });
  let releaseOutput: (() => Promise<void>) | undefined;
  // Closed after the journal: a run waiting for this one's rows settles its jobs once its
  // claims are gone, and needs its journal's lock free by then.
  const closeClaims: (() => Promise<void>)[] = [];
  try {
    // Two runs started at once both passed refuseOutputInUse: one takes the output's lock, the
    // other stops here, leaving no journal behind (its next run is a new run, not a resumed one).
    releaseOutput = await discardNewIfThrows(
      journal,
      claimOutput({
        runsDir: run.runsDir,
        key: adopted ?? key,
        target: run.output.target,
        input: input.path,
        command: run.command,
        as: run.words.option('output'),
      }),
    );
    if (adopted && deps.account && !journal.state.adopted?.includes(journalAccount(deps.account)))
      await journal.append(
        { t: 'adopted', account: journalAccount(deps.account) },
        { durable: true },
      );
    const settleRuns = (runs: string[], deadline: number) =>
      settleEarlierRuns({ ...earlier, key: adopted ?? key, only: new Set(runs), deadline });
    return await runWithJournal(run, deps, journal, {
      key: adopted ?? key,
      settleRuns,
      onClose: (f) => closeClaims.push(f),
    });
  } finally {
    await journal.close();
    for (const close of closeClaims) await close();
    await releaseOutput?.();
  }
}

/**
 * The run's dependencies as it uses them: a base URL that is a URL, and, asked to send
 * unconfirmed requests again (--resend-unconfirmed), a cache whose marks of them are no answers.
 */
function depsOf(run: ResolvedRun, deps: RunDeps): RunDeps {
  if (!URL.canParse(deps.baseUrl))
    throw new EnrichError('USAGE', `baseUrl must be a URL, got ${JSON.stringify(deps.baseUrl)}`);
  return run.resendUnconfirmed && deps.cache ? { ...deps, cache: withoutMarks(deps.cache) } : deps;
}

/** The key of a run of this input another key of the same account left unfinished (adopt-run.ts). */
function adoptedRun(
  run: ResolvedRun,
  deps: RunDeps,
  own: {
    key: string;
    input: InputIdentity;
    options: Record<string, unknown>;
  },
): Promise<string | undefined> {
  if (run.restart || !deps.account) return Promise.resolve(undefined);
  return adoptableRun({
    runsDir: run.runsDir,
    ...own,
    kind: run.kind,
    account: deps.account,
    api: deps.api,
    now: deps.env.now,
  }).catch((err: unknown) => {
    // The service did not answer about the old key's job: this stop says what to run next too.
    if (!(err instanceof EnrichError) || err.hint !== undefined) throw err;
    throw new EnrichError(err.code, err.message, {
      cause: err,
      hint: `Nothing was sent (the service was asked whether this key may resume another key's run of this file, and did not answer); ${run.words.resume} once it answers: ${run.command}`,
    });
  });
}

/**
 * The run's progress counters, reported through `onProgress`, and the hook its jobs report
 * to: a running job's 202 progress (when the service sends one) counts towards `jobsRunning`.
 */
function progressSink(deps: RunDeps): ProgressSink & { onJob: (e: JobEvent) => void } {
  const progress: RunProgress = {
    phase: 'reading',
    rowsRead: 0,
    jobsTotal: 0,
    jobsDone: 0,
    creditsCharged: 0,
    rowsWritten: 0,
  };
  const emit = () => deps.onProgress?.({ ...progress });
  const running = new Map<string, number>();
  const notFound = new Set<string>();
  let saidNotFound = false;
  const onJob = (e: JobEvent) => {
    if (e.t === 'pending' && e.total)
      running.set(e.batch, Math.min(1, (e.processed ?? 0) / e.total));
    else if (e.t === 'done' || e.t === 'ended') running.delete(e.batch);
    if (running.size > 0) progress.jobsRunning = [...running.values()].reduce((a, b) => a + b, 0);
    else delete progress.jobsRunning;
    if (e.t === 'not-found') {
      // Said once a run: the progress line counts the jobs that answer 404 from then on.
      if (!saidNotFound) deps.onWarning?.(notFoundYet(e.job, e.until));
      saidNotFound = true;
      notFound.add(e.batch);
    } else notFound.delete(e.batch);
    if (notFound.size > 0) progress.jobsNotFound = notFound.size;
    else delete progress.jobsNotFound;
    deps.onJob?.(e);
    // A job's end is reported once it is counted done (drive.ts).
    if (e.t === 'pending' || e.t === 'not-found') emit();
  };
  return { progress, emit, onJob };
}

/** The shared context of the run's batches, and the run's one stop reason. */
function batchContext(
  run: ResolvedRun,
  deps: RunDeps,
  journal: Journal,
  join: StreamJoin | undefined,
  flight: FlightGate,
) {
  let stopReason: StopReason | undefined;
  let onlyBudget = true; // every stop so far is --max-credits being reached
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
    splits: { accepted: false, blind: 0 },
    limit: createLimiter(Math.min(run.concurrency ?? REQUESTS_IN_FLIGHT, REQUESTS_IN_FLIGHT)),
    flight,
    stopped: (paid) =>
      deps.env.signal?.aborted
        ? INTERRUPTED_NOT_SENT
        : paid && onlyBudget
          ? undefined
          : stopReason && `not sent: ${stopReason.message}`,
    stop: (code, message, budget) => {
      if (!budget) onlyBudget = false;
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
  own: {
    key: string;
    /** Settles the jobs of runs that ended holding rows this one waited for (earlier-runs.ts). */
    settleRuns: (runs: string[], deadline: number) => Promise<void>;
    /** Told what to close once the journal is (the row claims). */
    onClose: (close: () => Promise<void>) => void;
  },
): Promise<RunSummary> {
  const { key } = own;
  const sink = progressSink(deps);
  const openOutput = outputOpener(run, sink);
  // Waiting for the results, rows are written as their batches come back (the one-pass
  // join, see stream-join.ts); without waiting, the output is written only if every job
  // is done at the end.
  let out = run.wait ? await openOutput() : undefined;
  let join: StreamJoin | undefined;
  try {
    const reps = new RowIndex();
    const use = cacheUse(run, deps, journal);
    // Without dedupe, a batch may send one request for several rows: the join must know which.
    const sameRequests = run.dedupe ? undefined : new SameRequests();
    const store = {
      journalDir: journal.dir,
      reps,
      cachedOutcome: use.cachedOutcomeOf,
      ...(sameRequests ? { sameRequests } : {}),
      leftOut: leftOutByFilter(run.words, run.metadata),
    };
    const gate = flightGate(run.concurrency, deps.env.now, deps.api);
    join = out && openStreamJoin(run, deps, store, out, gate);
    const { ctx, stopReason } = batchContext(run, deps, journal, join, gate);
    Object.assign(ctx, use.hooks);
    ctx.onJob = sink.onJob;
    const notSentNow = () => notSent(stopReason());
    const to = { resent: use.resent, store: { ...run, ...store }, gate, sink, notSent: notSentNow };
    const claimed = runClaims(run, ctx, { ...deps, run: key, settleRuns: own.settleRuns }, to);
    if (claimed) own.onClose(claimed.close);
    // A resume's rows whose answers are gone are claimed like its batches' rows.
    const resent = await resendGone(run, ctx, use, to, claimed?.refill);
    const driven = await driveBatches(run, ctx, {
      join,
      sink,
      reps,
      gate,
      cache: use.lookup,
      sameRequests,
      resent: use.resent,
      ...(claimed ? { claims: claimed.drive } : {}),
    });
    if (driven.overBudget > 0) stopAtBudget(ctx);
    sink.progress.phase = 'waiting';
    sink.emit();
    const leaves = (await allTasks(driven.tasks, deps.env.signal))
      .flat()
      .sort((a, b) => a.first - b.first);
    if (deps.env.signal?.aborted)
      throw new EnrichError('INTERRUPTED', 'interrupted; the journal is saved');
    const again = claimed ? [...resent, ...claimed.leaves] : resent;
    const all = again.length > 0 ? [...leaves, ...again] : leaves;
    const base = summaryBase(journal, key, driven, all, stopReason(), ctx.balance);
    // Not waiting: finish only when every job is already done; else report the jobs.
    if (!run.wait && base.jobs.pending > 0)
      return { ...base, ...emptyStats(), written: false, secondPassFrom: null, exitCode: 0 };
    sink.progress.phase = 'writing';
    sink.emit();
    out ??= await openOutput();
    const final = { leaves, dupCounts: driven.dupCounts, notSent: notSent(base.stopReason) };
    const stats = join
      ? await join.finish(final)
      : await writeAllAtOnce({ ...run, ...store }, driven, final, out);
    out = undefined; // closed: nothing to abort any more
    const notSentRows = base.cacheGone + base.heldOut + base.unconfirmedEarlier;
    const exitCode = exitCodeFor(stats, base.jobs, base.stopReason, notSentRows);
    await journal.append({ t: 'done', output: run.output.target, exit: exitCode });
    // Rows an answer left out were sent too: their charge is as unknown as a lost answer's.
    const { missingSent, ...written } = stats;
    const chargeUnknownRows = base.chargeUnknownRows + missingSent;
    return { ...base, ...written, chargeUnknownRows, written: true, exitCode };
  } catch (err) {
    join?.cancel(); // a second pass still waiting for jobs stops reading the input
    await out?.abort().catch(() => undefined);
    throw err;
  }
}

/** Opens the run's output; each row written counts into the progress. */
function outputOpener(run: ResolvedRun, sink: ProgressSink) {
  return () =>
    openJoinWriter({
      ...run,
      onRow: () => {
        if (++sink.progress.rowsWritten % 10_000 === 0) sink.emit();
      },
    });
}

/**
 * A resumed run's rows an earlier attempt took from the cache whose answers are gone since:
 * sent again before the other batches (refill.ts); their outcomes go to `use.resent`, their
 * leaves (for the summary, never the join: their rows lie inside other batches' ranges) back.
 */
async function resendGone(
  run: ResolvedRun,
  ctx: BatchContext,
  use: ReturnType<typeof cacheUse>,
  to: Omit<ResendTo, 'resent'>,
  claims: RefillClaims | undefined,
): Promise<LeafResult[]> {
  if (!use.lookup || !use.resent || !ctx.journal.state.hits) return [];
  const { progress } = to.sink;
  const done = await refillGone(run, ctx, {
    lookup: use.lookup,
    store: to.store,
    gate: to.gate,
    notSent: to.notSent,
    claims,
  });
  takeResent(use.resent, done, progress);
  return done.leaves;
}

/**
 * The leaves of every batch task, or the first task's error. Interrupted (Ctrl-C, SIGTERM),
 * the run ends only once every task has: a POST already sent gets its answer and its job is
 * journaled (polls and new submissions stop at once), so the resume downloads a job the
 * service accepted instead of holding it unconfirmed. (A second Ctrl-C leaves at once.)
 */
async function allTasks(
  tasks: readonly Promise<LeafResult[]>[],
  signal: AbortSignal | undefined,
): Promise<LeafResult[][]> {
  try {
    return await Promise.all(tasks);
  } catch (err) {
    if (signal?.aborted) await Promise.allSettled(tasks);
    throw err;
  }
}

type StreamJoinSource = JoinSource & { source: ResolvedRun['source'] };

/** The one-pass join of a run that waits for its results. */
function openStreamJoin(
  run: ResolvedRun,
  deps: RunDeps,
  store: Pick<
    StreamJoinSource,
    'journalDir' | 'reps' | 'cachedOutcome' | 'sameRequests' | 'leftOut'
  >,
  out: JoinWriter,
  gate: FlightGate,
) {
  return createStreamJoin({ ...run, ...store }, out, {
    // Room for the batches in flight plus two being filled: the reader keeps the service
    // busy without holding more rows (memory) than that.
    windowRows: () => windowRows(gate.target(), run.batchSize),
    keepOutcomes: Math.max(1024, run.batchSize),
    // A head job that keeps the reader waiting a second is a slow service's: the rows are
    // let go and written by the trailing pass as their jobs end (a second read of the file,
    // which costs CPU, not time to results); a service that answers at once never waits this long.
    headWaitMs: 1000,
    ...(deps.onServiceBound ? { onServiceBound: deps.onServiceBound } : {}),
    ...deps.join,
  });
}

/** How the run reads and fills the results cache (nothing without one). */
function cacheUse(run: ResolvedRun, deps: RunDeps, journal: Journal) {
  const { cache } = deps;
  if (!cache) return {};
  const hits = journal.state.hits;
  const journaled = hits && { upTo: hits.upTo, ranges: [...hits.ranges] };
  const lookup = cacheLookup(cache, run.cache, deps.env.now, journaled) as CacheLookup;
  const remember: BatchContext['remember'] = run.cache.write
    ? async (items, records, remaining) => {
        const at = deps.env.now();
        const missing: SentItem[] = [];
        fillCache(cache, run.kind, items, { records, remaining, at }, missing);
        // Rows the answer left out (missing) were sent and may have been charged: marked as
        // requests sent without an answer, so that no other run (another file's) sends them
        // again by itself, as this run's resume does not. Contacts a --require-email/-mobile
        // filter left out are not (api-spec 4.1: not returned, nothing charged).
        if (missing.length > 0 && leftOutByFilter(run.words, run.metadata) === undefined)
          markUnconfirmedIn(cache, missing, at);
        await cache.settled?.();
      }
    : undefined;
  const markUnconfirmed: BatchContext['markUnconfirmed'] = run.cache.write
    ? (items) => markUnconfirmedIn(cache, items, deps.env.now())
    : undefined;
  const claimKey = cache.claimKey?.bind(cache);
  const keepKeys: BatchContext['keepKeys'] =
    run.cache.write && claimKey
      ? (id, items) =>
          keepBatchKeys(
            journal.dir,
            id,
            items.map((i) => claimKey(i.key)),
          )
      : undefined;
  // Rows whose cached answer was gone, sent again by this run (refill.ts), by request key.
  const resent: Resent = { outcomes: new Map(), over: new Set() };
  // The second pass reads a cached row's answer again (the first pass held it only briefly).
  const cachedOutcomeOf = (row: InputRow) => {
    const v = validateRow(run.kind, run.mapping, row, run.validate);
    if (!v.ok) return cachedOutcome(undefined, CACHED_ANSWER_GONE, run.words);
    return (
      resent.outcomes.get(v.key) ?? cachedOutcome(lookup.any(v.key), CACHED_ANSWER_GONE, run.words)
    );
  };
  const hooks: Pick<BatchContext, 'remember' | 'markUnconfirmed' | 'keepKeys'> = {
    remember,
    markUnconfirmed,
    keepKeys,
  };
  return { lookup, hooks, cachedOutcomeOf, resent };
}

/** A run that did not wait, with every job done: the whole output in one pass over the input. */
async function writeAllAtOnce(
  source: StreamJoinSource,
  driven: Driven,
  final: { leaves: LeafResult[]; dupCounts: Map<number, number>; notSent: string },
  out: JoinWriter,
) {
  await writeJoinedFrom({ ...source, reps: driven.reps, ...final }, out, 0);
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
    cacheHits: driven.cacheHits,
    creditsSaved: driven.creditsSaved,
    cacheGone: driven.cacheGone,
    cacheResent: driven.cacheResent,
    heldOut: driven.heldOut,
    unconfirmedEarlier: driven.unconfirmedEarlier,
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
