import { createHash } from 'node:crypto';
import { expirationToMs } from '../../contract/rules.js';
import { isEnrichError } from '../../errors.js';
import type { Journal } from '../journal/journal.js';
import { isCreditError } from '../join/join.js';
import { pollJob, resumeBy, type PollEnv, type ResultsAnswer } from './poll.js';
import { retryCreditFailures } from './credit-retry.js';
import { writeSpool } from '../journal/spool.js';
import { isBatchTooLarge } from './submit.js';

/** The two kinds of bulk run. */
export type BulkKind = 'contacts' | 'companies';

/** The part of the API client the bulk run needs (the client arrives as this interface). */
export interface BulkApi {
  submit(
    kind: BulkKind,
    body: { items: unknown[]; metadata: Record<string, unknown> },
    idempotencyKey: string,
  ): Promise<{ job_id: string; download_url: string; expiration_date: string | number }>;
  results(
    kind: BulkKind,
    jobId: string,
    downloadUrl: string,
  ): Promise<ResultsAnswer<Record<string, unknown>>>;
}

/** One element to send, with the input row it stands for. */
export interface BatchItem {
  index: number;
  element: Record<string, unknown>;
}

/** What became of one submitted (leaf) batch. */
export interface LeafResult {
  id: string;
  first: number;
  last: number;
  count: number;
  state: 'spooled' | 'failed' | 'expired' | 'pending' | 'unsent';
  error?: string;
  code?: string;
  jobId?: string;
  credits: number;
  remaining: number | null;
  creditError: boolean;
  polls: number;
  submits: number;
  /** Spools of this batch's credit retries, read by the join after its own. */
  extra?: string[];
  /** This batch's latest credit retry, when its job did not finish (a job of its own). */
  retry?: {
    state: 'failed' | 'expired' | 'pending' | 'unsent';
    batch: string;
    jobId?: string;
    /** What became of the retry, for the rows it holds. */
    error?: string;
  };
}

/** What `--max-credits` still lets this run commit to new submissions. */
export interface Budget {
  /** `--max-credits` as given (for messages); undefined when the run has no limit. */
  limit?: number;
  /** Credits left to commit (Infinity without a limit). */
  left: number;
  /** What one row may cost: 1 for contacts, `--top` for companies. */
  perRow: number;
}

/** Shared, read-mostly context of every batch task of a run. */
export interface BatchContext {
  kind: BulkKind;
  metadata: Record<string, unknown>;
  journal: Journal;
  api: BulkApi;
  env: PollEnv;
  deadline: number;
  wait: boolean;
  /** Shared by every batch of the run: taken when rows are read, or before a POST (see runBatch). */
  budget: Budget;
  /** Bounds the HTTP requests in flight. */
  limit: <T>(task: () => Promise<T>) => Promise<T>;
  /** Returns the reason new submissions must not be made, if any. */
  stopped(): string | undefined;
  /** Called when a failure must stop the whole run (auth, network, credits). */
  stop(code: string, message: string): void;
  /** Hands the records of a batch just spooled to the join (which then need not read them back). */
  spooled?: (spoolId: string, records: Record<string, unknown>[]) => void;
}

/** The idempotency key of a batch: stable across re-runs of the same run, new after --restart. */
export function idempotencyKey(runKey: string, nonce: string, batchId: string): string {
  return `enrich-${createHash('sha256').update(`${runKey}:${nonce}:${batchId}`).digest('hex').slice(0, 40)}`;
}

const STOP_CODES = new Set([
  'AUTH_INVALID',
  'AUTH_FORBIDDEN',
  'NETWORK',
  'TIMEOUT',
  'SERVER_ERROR',
  'RATE_LIMITED',
]);

/**
 * Takes one batch from wherever the journal left it to spooled results: submits it
 * (journaled before and after the POST), splits it when the service says it is too
 * large, polls, and spools. `onAccepted` fires once the POST is safely journaled,
 * so the caller can release the batch's memory and read on. `prepaid`: the reader
 * already took these rows' credits from the budget (a batch new to the journal);
 * otherwise (a batch an earlier run journaled, a credit retry) its credits are taken
 * just before its POST, all or nothing, since a journaled batch must be sent again
 * exactly as it was (same body, same idempotency key) or not at all.
 */
export async function runBatch(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  onAccepted: () => void,
  prepaid = false,
): Promise<LeafResult[]> {
  const first = (items[0] as BatchItem).index;
  const last = (items[items.length - 1] as BatchItem).index;
  const base = {
    id,
    first,
    last,
    count: items.length,
    credits: 0,
    remaining: null,
    creditError: false,
    polls: 0,
    submits: 0,
  };
  const { journal } = ctx;
  let state = journal.state.batches.get(id);

  if (state?.splitSize) return splitAndRun(ctx, id, items, state.splitSize, onAccepted, prepaid);
  if (state?.spooled) {
    onAccepted();
    const { credits, remaining, creditError } = state.spooled;
    const leaf: LeafResult = { ...base, state: 'spooled', jobId: state.job, credits, remaining };
    if (!creditError) return [{ ...leaf, creditError }];
    return [await retryCreditFailures(ctx, id, items, { ...leaf, creditError }, runBatch)];
  }
  if (state?.expired) {
    onAccepted();
    return [{ ...base, state: 'expired', jobId: state.job, error: expiredMessage(state.job) }];
  }

  let submits = 0;
  if (!state?.job) {
    const reason = ctx.stopped() ?? (prepaid ? undefined : takeCredits(ctx, items.length));
    if (reason) {
      onAccepted();
      return [{ ...base, state: 'unsent', error: reason }];
    }
    const idem =
      state?.idem ?? idempotencyKey(journal.state.header.run, journal.state.header.nonce, id);
    await journal.append(
      { t: 'submit', batch: id, first, last, count: items.length, idem },
      { durable: true },
    );
    try {
      submits++;
      const body = { items: items.map((i) => i.element), metadata: ctx.metadata };
      const job = await ctx.limit(() => ctx.api.submit(ctx.kind, body, idem));
      const expires = expirationToMs(job.expiration_date) ?? null;
      await journal.append(
        { t: 'accepted', batch: id, job: job.job_id, url: job.download_url, expires },
        { durable: true },
      );
    } catch (err) {
      if (isBatchTooLarge(err) && items.length > 1) {
        const size = Math.ceil(items.length / 2);
        await journal.append({ t: 'split', batch: id, size }, { durable: true });
        // The parts' credits are this batch's, already taken.
        return splitAndRun(ctx, id, items, size, onAccepted, true);
      }
      onAccepted();
      const { code, message } = failureOf(err);
      await journal.append({ t: 'failed', batch: id, code, message });
      if (STOP_CODES.has(code)) ctx.stop(code, message);
      return [{ ...base, state: 'failed', code, error: `not enriched: ${message}`, submits }];
    }
    state = journal.state.batches.get(id);
  }
  onAccepted();
  const jobId = state?.job as string;
  return [
    { ...(await pollAndSpool(ctx, id, jobId, state?.url ?? '')), ...pick(base), jobId, submits },
  ];
}

function pick(base: Omit<LeafResult, 'state'>) {
  return { id: base.id, first: base.first, last: base.last, count: base.count };
}

/** How many more rows the budget pays for (Infinity without --max-credits). */
export function affordableRows(budget: Budget): number {
  return Math.floor(budget.left / budget.perRow);
}

/** Stops the run (exit 5) because --max-credits is reached, and says so. */
export function stopAtBudget(ctx: BatchContext): string {
  const message = `--max-credits ${ctx.budget.limit} reached`;
  ctx.stop('CREDITS_EXHAUSTED', message);
  return message;
}

/**
 * Takes the credits of `rows` rows from the run's budget before they are sent; when they
 * do not fit, stops the run (exit 5) and returns why the rows are not sent.
 */
function takeCredits(ctx: BatchContext, rows: number): string | undefined {
  if (rows > affordableRows(ctx.budget)) return `not sent: ${stopAtBudget(ctx)}`;
  ctx.budget.left -= rows * ctx.budget.perRow;
  return undefined;
}

async function splitAndRun(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  size: number,
  onAccepted: () => void,
  prepaid: boolean,
): Promise<LeafResult[]> {
  const parts: LeafResult[][] = [];
  let pending = Math.ceil(items.length / size);
  const partAccepted = () => {
    if (--pending === 0) onAccepted();
  };
  for (let k = 0; k * size < items.length; k++) {
    parts.push(
      await runBatch(
        ctx,
        `${id}.${k}`,
        items.slice(k * size, (k + 1) * size),
        partAccepted,
        prepaid,
      ),
    );
  }
  return parts.flat();
}

function failureOf(err: unknown): { code: string; message: string } {
  return {
    code: isEnrichError(err) ? err.code : 'INTERNAL',
    message: err instanceof Error ? err.message : String(err),
  };
}

function expiredMessage(jobId: string | undefined): string {
  return `results of job ${jobId ?? '?'} expired before they were downloaded; re-run with --restart to enrich these rows again (costs credits)`;
}

type PollPart = Omit<LeafResult, 'id' | 'first' | 'last' | 'count' | 'submits'>;

async function pollAndSpool(
  ctx: BatchContext,
  id: string,
  jobId: string,
  url: string,
): Promise<PollPart> {
  const none = { credits: 0, remaining: null, creditError: false };
  const fetch = () => ctx.limit(() => ctx.api.results(ctx.kind, jobId, url));
  const expires = ctx.journal.state.batches.get(id)?.expires;
  let outcome;
  try {
    // --no-wait: one look at the job (a deadline already passed), no waiting.
    const deadline = ctx.wait ? ctx.deadline : 0;
    outcome = await pollJob(fetch, { deadline, env: ctx.env, expires });
  } catch (err) {
    const { code, message } = failureOf(err);
    if (code === 'INTERRUPTED') throw err;
    if (STOP_CODES.has(code)) ctx.stop(code, message);
    return {
      ...none,
      state: 'pending',
      code,
      error: `results of job ${jobId} not downloaded: ${message}; run the same command again to resume${resumeBy(expires, ctx.env.now())}`,
      polls: 1,
    };
  }
  if (outcome.state === 'expired') {
    await ctx.journal.append({ t: 'expired', batch: id });
    return { ...none, state: 'expired', error: expiredMessage(jobId), polls: outcome.polls };
  }
  if (outcome.state === 'timeout') {
    const by = resumeBy(expires, ctx.env.now());
    const msg = ctx.wait
      ? `job ${jobId} was still running at --timeout; run the same command again to resume${by}`
      : `job ${jobId} is still running; run the same command again to fetch its results${by}`;
    return { ...none, state: 'pending', code: 'TIMEOUT', error: msg, polls: outcome.polls };
  }
  const records = outcome.records;
  let credits = 0;
  let creditError = false;
  for (const r of records) {
    if (r.credit_charged === true) credits++;
    if (!creditError && isCreditError(r)) creditError = true;
  }
  // The response body re-parses to exactly these records (the schemas only check, never
  // transform), so its bytes are spooled as they came rather than stringified again.
  await writeSpool(ctx.journal.dir, id, outcome.body ?? records);
  await ctx.journal.append(
    {
      t: 'spooled',
      batch: id,
      records: records.length,
      credits,
      remaining: outcome.remainingCredits,
      creditError,
    },
    { durable: true },
  );
  ctx.spooled?.(id, records);
  if (creditError) ctx.stop('CREDITS_EXHAUSTED', 'the account ran out of credits');
  return {
    state: 'spooled',
    credits,
    remaining: outcome.remainingCredits,
    creditError,
    polls: outcome.polls,
  };
}
