import { join as joinPath } from 'node:path';
import { EnrichError } from '../../errors.js';
import type { InputSource } from '../../io/read.js';
import {
  runBatch,
  type BatchContext,
  type BatchItem,
  affordableRows,
  stopAtBudget,
  type Budget,
  type BulkApi,
  type BulkKind,
  type LeafResult,
} from './batch-task.js';
import { createDeduper } from './dedupe.js';
import {
  changedSinceEarlierRun,
  hasJournal,
  openJournal,
  runKey,
  type Journal,
} from '../journal/journal.js';
import { ID_FIELD, ROW_FIELD } from '../join/join.js';
import type { ColumnMapping } from '../mapping/map-columns.js';
import type { PollEnv } from './poll.js';
import { RowIndex } from '../join/row-index.js';
import { createLimiter, createSemaphore } from './submit.js';
import { validateRow, type ValidateOptions } from '../mapping/validate.js';
import {
  countJobs,
  emptyStats,
  exitCodeFor,
  lastRemaining,
  strongerStop,
  sum,
  type RunSummary,
} from './run-summary.js';
import { openJoinWriter, type JoinOutput } from '../join/join-writer.js';
import { createStreamJoin, type StreamJoin, type StreamJoinOptions } from '../join/stream-join.js';
import { writeJoinedFrom } from '../join/write-joined.js';

export { exitCodeFor, type RunSummary } from './run-summary.js';
export type { JoinOutput } from '../join/join-writer.js';

/** Everything a bulk run needs, resolved by the caller (the CLI or a library user). */
export interface RunOptions {
  kind: BulkKind;
  source: InputSource;
  mapping: ColumnMapping;
  /** The mapping as saved (`--save-mapping` form); part of the run's identity. */
  mappingJson: Record<string, unknown>;
  validate: ValidateOptions;
  metadata: Record<string, unknown>;
  batchSize: number;
  concurrency: number;
  dedupe: boolean;
  idColumn?: number;
  maxCredits?: number;
  timeoutMs: number;
  wait: boolean;
  restart: boolean;
  /** Directory holding run journals and spools (the OS state dir). */
  runsDir: string;
  /** The service's base URL: a run belongs to one service (its origin is part of the run's identity). */
  baseUrl: string;
  /** The command that resumes this run, for messages and `enrich jobs`. */
  command: string;
  output: JoinOutput;
  api: BulkApi;
  env: PollEnv;
  onProgress?: (p: RunProgress) => void;
  /** What the user should know before the run spends anything (the input changed since an earlier run...). */
  onWarning?: (message: string) => void;
  /** Tuning of the one-pass join (defaults suit any service; tests make it spill). */
  join?: Partial<StreamJoinOptions>;
}

/** Progress as the run goes. */
export interface RunProgress {
  phase: 'reading' | 'waiting' | 'writing';
  rowsRead: number;
  jobsTotal: number;
  jobsDone: number;
  creditsCharged: number;
  rowsWritten: number;
}

const INVALID = -1;

/** Refuses options no run can work with (a library caller has no CLI checking its flags). */
function checkRunOptions(o: RunOptions): void {
  const bad = (what: string) => {
    throw new EnrichError('USAGE', `runBulk: ${what}`);
  };
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1 || o.concurrency > 64)
    bad(`concurrency must be an integer from 1 to 64, got ${o.concurrency}`);
  if (!Number.isInteger(o.batchSize) || o.batchSize < 1)
    bad(`batchSize must be a positive integer, got ${o.batchSize}`);
  if (!(o.timeoutMs >= 0)) bad(`timeoutMs must be a number of ms >= 0, got ${o.timeoutMs}`);
  if (o.maxCredits !== undefined && !(Number.isInteger(o.maxCredits) && o.maxCredits >= 0))
    bad(`maxCredits must be an integer >= 0, got ${o.maxCredits}`);
  if (!URL.canParse(o.baseUrl)) bad(`baseUrl must be a URL, got ${JSON.stringify(o.baseUrl)}`);
}

/** Runs a bulk enrichment end to end: plan, submit, poll, spool, join, write. */
export async function runBulk(o: RunOptions): Promise<RunSummary> {
  checkRunOptions(o);
  const identity = await o.source.identity();
  const requestOptions = {
    service: new URL(o.baseUrl).origin,
    mapping: o.mappingJson,
    metadata: o.metadata,
    dedupe: o.dedupe,
    idColumn: o.idColumn ?? null,
  };
  const key = runKey(o.kind, identity, requestOptions);
  // A resumed run has the same content as when it started: what a new run says and
  // checks below was said and checked then.
  if (o.restart || !(await hasJournal(o.runsDir, key))) {
    // Batches are sent while the file is still being read: a malformed line near its end
    // would stop the run after paying for the rows above it, and fixing the file makes a
    // new run that pays for them again. So a new run reads the whole file once first.
    await o.source.check();
    const earlier = await changedSinceEarlierRun(o.runsDir, key, {
      kind: o.kind,
      input: identity,
      options: requestOptions,
    });
    if (earlier) {
      o.onWarning?.(
        `${o.source.name} changed since a run of it started ${new Date(earlier.at).toISOString()}: this is a new run, and every valid row is sent and paid for again, also those that run enriched. To pay only for new rows, put them in a file of their own; to finish that run, run it on the file as it was.`,
      );
    }
  }
  const journal = await openJournal({
    runsDir: o.runsDir,
    key,
    restart: o.restart,
    now: o.env.now,
    header: { kind: o.kind, input: identity, options: requestOptions, command: o.command },
  });
  try {
    return await runWithJournal(o, journal, key);
  } finally {
    await journal.close();
  }
}

async function runWithJournal(o: RunOptions, journal: Journal, key: string): Promise<RunSummary> {
  const started = o.env.now();
  const progress: RunProgress = {
    phase: 'reading',
    rowsRead: 0,
    jobsTotal: 0,
    jobsDone: 0,
    creditsCharged: 0,
    rowsWritten: 0,
  };
  const emit = () => o.onProgress?.({ ...progress });
  const reps = new RowIndex();
  const joinSource = { ...o, journalDir: journal.dir, reps };
  const openOutput = () =>
    openJoinWriter({
      ...o,
      onRow: () => {
        progress.rowsWritten++;
        if (progress.rowsWritten % 10_000 === 0) emit();
      },
    });
  // Waiting for the results, rows are written as their batches come back (the one-pass
  // join, see stream-join.ts); --no-wait writes only if every job is done at the end.
  let out = o.wait ? await openOutput() : undefined;
  const join =
    out &&
    createStreamJoin(joinSource, out, {
      // Room for the batches in flight plus two being filled: the reader keeps the service
      // busy without holding more rows (memory) than that.
      windowRows: Math.min(32_768, Math.max(4096, (o.concurrency + 2) * o.batchSize)),
      keepOutcomes: Math.max(1024, o.batchSize),
      headWaitMs: 5000,
      ...o.join,
    });
  try {
    let stopReason: { code: string; message: string } | undefined;
    // --max-credits: new rows take their credits as they are read (rows past the limit are
    // never sent); batches an earlier run journaled, and credit retries, take theirs just
    // before their POST (runBatch). A batch already accepted by the service costs nothing more.
    const budget: Budget = {
      limit: o.maxCredits,
      left: o.maxCredits ?? Infinity,
      perRow: o.kind === 'companies' ? Number(o.metadata.top_matches_returned ?? 1) : 1,
    };
    const ctx: BatchContext = {
      kind: o.kind,
      metadata: o.metadata,
      journal,
      api: o.api,
      env: o.env,
      deadline: started + o.timeoutMs,
      wait: o.wait,
      budget,
      limit: createLimiter(o.concurrency),
      stopped: () =>
        o.env.signal?.aborted
          ? 'not sent: the run was interrupted'
          : stopReason && `not sent: ${stopReason.message}`,
      stop: (code, message) => {
        stopReason = strongerStop(stopReason, { code, message });
      },
      spooled: join && ((id, records) => join.spooled(id, records)),
    };

    // Pass 1: read, validate, dedupe, batch and submit as batches fill. At most
    // `concurrency` batches are held in memory waiting for their POST.
    const dupCounts = new Map<number, number>();
    const deduper = createDeduper();
    const tasks: Promise<LeafResult[]>[] = [];
    const submitting = createSemaphore(o.concurrency);
    let valid = 0;
    let duplicates = 0;
    let batch: BatchItem[] = [];
    let batchNo = 0;
    let overBudget = 0;

    // What an earlier run journaled of the batch being filled: a resumed run rebuilds
    // each batch with the same rows, whatever --batch-size or --max-credits say now.
    let journaled = journal.state.batches.get('0');
    const flush = async () => {
      if (batch.length === 0) return;
      const items = batch;
      // A batch new to the journal: its rows took their credits as they were read.
      const prepaid = !journaled;
      const no = batchNo++;
      journaled = journal.state.batches.get(String(batchNo));
      batch = [];
      progress.jobsTotal++;
      // Wait for a free submission slot before reading on: this bounds memory to
      // `concurrency` batches awaiting their POST. The slot frees once it is accepted.
      await submitting.acquire();
      let released = false;
      const release = () => {
        if (!released) submitting.release();
        released = true;
      };
      const task = runBatch(ctx, String(no), items, release, prepaid)
        .finally(release)
        .then(
          (leaves) => {
            progress.jobsDone++;
            for (const l of leaves) progress.creditsCharged += l.credits;
            join?.batchDone(no, leaves);
            emit();
            return leaves;
          },
          (err: unknown) => {
            // The run fails with this error (Promise.all below); the join must not wait for it.
            join?.batchDone(no, []);
            throw err;
          },
        );
      // Handled here too: a batch failing while pass 1 still reads is an error of the run,
      // reported by Promise.all below, not an unhandled rejection that kills the process.
      task.catch(() => undefined);
      tasks.push(task);
    };

    for await (const row of o.source.rows()) {
      progress.rowsRead++;
      if (progress.rowsRead % 10_000 === 0) emit();
      if (join?.full()) await join.room();
      const v = validateRow(o.kind, o.mapping, row, o.validate);
      if (!v.ok) {
        reps.push(INVALID);
        join?.invalid(row, v);
        continue;
      }
      valid++;
      if (o.dedupe) {
        const first = deduper.check(v.key, row.index);
        if (first !== undefined) {
          reps.push(first);
          dupCounts.set(first, (dupCounts.get(first) ?? 0) + 1);
          duplicates++;
          join?.duplicate(row, first);
          continue;
        }
      }
      reps.push(row.index);
      if (!journaled && affordableRows(budget) === 0) {
        overBudget++;
        join?.sent(row, -1);
        continue; // beyond --max-credits: never sent
      }
      if (!journaled) budget.left -= budget.perRow;
      join?.sent(row, batchNo);
      const customFields: Record<string, unknown> = { [ROW_FIELD]: row.index };
      if (o.idColumn !== undefined) customFields[ID_FIELD] = row.cells[o.idColumn] ?? '';
      batch.push({ index: row.index, element: { ...v.fields, custom_fields: customFields } });
      if (batch.length >= (journaled?.count ?? o.batchSize)) await flush();
    }
    await flush();
    if (overBudget > 0) stopAtBudget(ctx);
    progress.phase = 'waiting';
    emit();

    const leaves = (await Promise.all(tasks)).flat().sort((a, b) => a.first - b.first);
    if (o.env.signal?.aborted) {
      throw new EnrichError('INTERRUPTED', 'interrupted; the journal is saved', {
        hint: `resume with: ${o.command}`,
      });
    }

    const jobs = countJobs(leaves, (b) => journal.state.batches.get(b)?.expires);
    const base = {
      runKey: key,
      journal: journal.path,
      resumed: journal.resumed,
      rows: reps.length,
      valid,
      duplicates,
      jobs,
      requests: { submits: sum(leaves, (l) => l.submits), polls: sum(leaves, (l) => l.polls) },
      creditsCharged: sum(leaves, (l) => l.credits),
      remainingCredits: lastRemaining(leaves),
      stopReason,
    };

    // --no-wait: finish only when every job is already done; else report the jobs.
    if (!o.wait && jobs.pending > 0) {
      return { ...base, ...emptyStats(), written: false, secondPassFrom: null, exitCode: 0 };
    }

    progress.phase = 'writing';
    emit();
    out ??= await openOutput();
    const final = {
      leaves,
      dupCounts,
      notSent: stopReason ? `not sent: ${stopReason.message}` : 'not sent',
    };
    let stats: Awaited<ReturnType<StreamJoin['finish']>>;
    if (join) stats = await join.finish(final);
    else {
      // --no-wait with every job done: the whole output in one pass over the input.
      await writeJoinedFrom({ ...joinSource, ...final }, out, 0);
      stats = { ...(await out.close()), secondPassFrom: 0 };
    }
    out = undefined; // closed: nothing to abort any more
    await journal.append({ t: 'done', output: o.output.target });
    return { ...base, ...stats, written: true, exitCode: exitCodeFor(stats, jobs, stopReason) };
  } catch (err) {
    await out?.abort().catch(() => undefined);
    throw err;
  }
}

/** The directory of run journals under a state dir. */
export function runsDirOf(stateDir: string): string {
  return joinPath(stateDir, 'runs');
}
