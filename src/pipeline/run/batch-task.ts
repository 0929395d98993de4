import { createHash } from 'node:crypto';
import { expirationToMs } from '../../contract/rules.js';
import { isEnrichError, stopsRun } from '../../errors.js';
import { spoolAnswer } from '../journal/spool.js';
import type { BatchItem, LeafResult, SentItem, SendControl } from '../types.js';
import type { BatchContext, BatchRun } from './batch-context.js';
import { takeCredits } from './budget.js';
import { creditRetryId, isCreditRetry, retryCreditFailures } from './credit-retry.js';
import {
  budgetReached,
  mayBeOutOfCredits,
  notDownloaded,
  notEnriched,
  OUT_OF_CREDITS,
  resultsExpired,
  stillRunning,
  unconfirmed,
} from './messages.js';
import { pollJob } from './poll.js';
import { splitReason } from './submit.js';
import { journaledFate } from './journaled-fate.js';

/** Where a batch stands once its submission is settled. */
type Submitted =
  | { t: 'final'; leaves: LeafResult[] }
  | {
      t: 'job';
      jobId: string;
      url: string;
      submits: number;
      /**
       * Sent by this process: its balance log's mark() when it was sent, and whether its answer
       * showed the balance (none: taken over from an earlier run).
       */
      sent?: { mark: number; balance: boolean };
    }
  | { t: 'credit-retry'; leaf: LeafResult };

/** The idempotency key of a batch: stable across re-runs of the same run, new after a restart. */
export function idempotencyKey(runKey: string, nonce: string, batchId: string): string {
  return `enrich-${createHash('sha256').update(`${runKey}:${nonce}:${batchId}`).digest('hex').slice(0, 40)}`;
}

/**
 * Takes one batch from wherever the journal left it to spooled results: submits it
 * (journaled before and after the POST), splits it when the service says it is too
 * large, polls, and spools. `paid`: the classification already took these rows' credits
 * (a batch new to the journal); otherwise (a batch an earlier run journaled, a credit
 * retry) its credits are taken just before its POST, all or nothing.
 */
export function startBatch(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  paid: boolean,
  beforePost?: () => Promise<void>,
): BatchRun {
  const submitted = submitBatch(ctx, id, items, paid, beforePost);
  const done = submitted.then((s) => {
    if (s.t === 'final') return s.leaves;
    if (s.t === 'credit-retry')
      return retryCreditFailures(ctx, id, items, s.leaf, startBatch).then((l) => [l]);
    if (!s.sent) return takenOver(ctx, id, items, s);
    return sentHere(ctx, { id, items: items.map(sentItem) }, s);
  });
  return { accepted: submitted.then(noop, noop), done };
}

/**
 * A job an earlier run (or process) sent, polled and spooled by this one: its answer's balance
 * says nothing of the time the job ran, so rows it may have skipped for credits are sent again
 * now, as a credit retry (the account has credits, or it would show dry). Only such a job keeps
 * its request elements while it runs: the retry needs them, and a job this process sent never
 * does (module-level, so that no closure of startBatch holds them).
 */
async function takenOver(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  job: { jobId: string; url: string; submits: number },
): Promise<LeafResult[]> {
  const p = await pollAndSpool(ctx, { id, items: items.map(sentItem) }, job);
  if (!p.unsure || isCreditRetry(id)) return [p.leaf];
  // Stryker disable next-line BooleanLiteral: retryCreditFailures sets every leaf's creditError itself
  return [await retryCreditFailures(ctx, id, items, { ...p.leaf, creditError: true }, startBatch)];
}

/**
 * A job this process sent, polled and spooled. When its answer may hold rows it skipped for
 * credits (the balance rose while it ran), their request elements are gone (let go once the job
 * was accepted): they are sent again by the next run (from the journal), and stay failed saying
 * so; the run is partial (exit 3). A credit retry's answer is final (credit-retry.ts): it is
 * never sent again for this.
 */
async function sentHere(
  ctx: BatchContext,
  batch: { id: string; items: readonly SentItem[] },
  job: Parameters<typeof pollAndSpool>[2],
): Promise<LeafResult[]> {
  const { leaf, unsure } = await pollAndSpool(ctx, batch, job);
  if (!unsure || isCreditRetry(leaf.id)) return [leaf];
  const error = mayBeOutOfCredits(ctx.words, leaf.jobId);
  const retry = { state: 'unsent' as const, batch: creditRetryId(leaf.id, 1), error };
  return [{ ...leaf, creditError: true, retry }];
}

const noop = () => undefined;
const sentItem = ({ index, key }: BatchItem): SentItem => ({ index, key });

function leafBase(id: string, items: readonly SentItem[]) {
  return {
    id,
    first: (items[0] as SentItem).index,
    last: (items[items.length - 1] as SentItem).index,
    count: items.length,
    credits: 0,
    remaining: null,
    creditError: false,
    polls: 0,
    submits: 0,
  };
}

/** Settles a batch's submission: from the journal when an earlier run did, else by a POST. */
async function submitBatch(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  paid: boolean,
  beforePost?: () => Promise<void>,
): Promise<Submitted> {
  const base = leafBase(id, items);
  const state = ctx.journal.state.batches.get(id);
  const fate = journaledFate(state, mayResend(ctx));
  if (fate === 'split')
    return { t: 'final', leaves: await runParts(ctx, id, items, state!.splitSize!, paid) };
  if (fate === 'answered') {
    const { credits, remaining, creditError, unsure } = state!.spooled!;
    const leaf: LeafResult = {
      ...base,
      state: 'spooled',
      jobId: state!.job,
      credits,
      creditsEarlier: credits,
      remaining,
      creditError,
    };
    // An answer that may hold rows the job skipped for credits (unsure; or not known, journaled
    // by an earlier build) goes the way of a dry one: those rows are sent once more.
    // A credit retry's own answer is final (credit-retry.ts), whatever it may hold.
    return creditError || (unsure !== false && !isCreditRetry(id))
      ? // Stryker disable next-line BooleanLiteral: retryCreditFailures sets every leaf's creditError itself
        { t: 'credit-retry', leaf: { ...leaf, creditError: true } }
      : { t: 'final', leaves: [leaf] };
  }
  if (fate === 'expired') {
    const error = resultsExpired(ctx.words, state!.job);
    return { t: 'final', leaves: [{ ...base, state: 'expired', jobId: state!.job, error }] };
  }
  if (fate === 'job') {
    ctx.flight?.accepted(id, true); // taken over from an earlier run: in flight from now on
    // Stryker disable next-line StringLiteral: 'job' is startBatch's default branch, any other tag goes the same way
    return { t: 'job', jobId: state!.job!, url: state!.url ?? '', submits: 0 };
  }
  if (fate === 'unconfirmed') {
    const why = state!.unconfirmed?.message ?? 'the run stopped before the answer came';
    const error = unconfirmed(ctx.words, why);
    ctx.markUnconfirmed?.(items);
    return { t: 'final', leaves: [{ ...base, state: 'unconfirmed', error }] };
  }
  const reason = ctx.stopped(paid) ?? (paid ? undefined : creditsOrStop(ctx, items.length));
  if (reason) return { t: 'final', leaves: [{ ...base, state: 'unsent', error: reason }] };
  // What the batch is made of (the cache decisions of the rows up to it), journaled only now
  // that it is sent: a resume decides rows that were never sent again (drive.ts).
  await beforePost?.();
  return postBatch(ctx, id, items, state?.idem);
}

/** Sending such a batch again is safe only to a service that honours idempotency keys, or when asked. */
function mayResend(ctx: BatchContext): boolean {
  return ctx.resendUnconfirmed || ctx.api.honoursIdempotency?.(ctx.kind) === true;
}

/** Journals the batch, POSTs it, and journals the job it became (or why it did not). */
async function postBatch(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  journaledIdem: string | undefined,
): Promise<Submitted> {
  const { journal } = ctx;
  const base = leafBase(id, items);
  const idem =
    journaledIdem ?? idempotencyKey(journal.state.header.run, journal.state.header.nonce, id);
  const { first, last } = base;
  const sent = { t: 'submit', batch: id, first, last, count: items.length, idem } as const;
  // The batch's keys are written before its submit line (a kill after that line leaves them),
  // and reach the disk alongside that line's flush, both before the POST: after a power cut,
  // what the journal says was sent, they say of which rows.
  const flushKeys = await ctx.keepKeys?.(id, items);
  const journalSent = async () => {
    await Promise.all([flushKeys?.(), journal.append(sent, { durable: true })]);
  };
  // A Ctrl-C ends a wait to send (a 429's Retry-After can be hours), not a POST on its way.
  const how: SendControl = { stop: ctx.env.signal };
  if (ctx.api.submit.journalsAttempts) {
    // On disk before each attempt goes out, and not before: a batch killed while it waited
    // for its turn (or out a 429) was never sent, and its resume sends it by itself.
    how.hooks = {
      sending: journalSent,
      notSent: ({ code, message }) => journal.append({ t: 'failed', batch: id, code, message }),
    };
  } else await journalSent();
  try {
    const body = { items: items.map((i) => i.element), metadata: { ...ctx.metadata } };
    let sentMark = ctx.balance.mark();
    const job = await ctx.limit(() => {
      sentMark = ctx.balance.mark();
      return ctx.api.submit(ctx.kind, body, idem, how);
    });
    ctx.balance.seen(job.remaining_credits, ctx.env.now(), sentMark);
    ctx.splits.accepted = true;
    const balance = Number.isFinite(job.remaining_credits);
    const expires = expirationToMs(job.expiration_date) ?? null;
    await journal.append(
      { t: 'accepted', batch: id, job: job.job_id, url: job.download_url, expires },
      { durable: true },
    );
    ctx.onJob?.({ t: 'submitted', batch: id, job: job.job_id, rows: items.length });
    ctx.flight?.accepted(id, false, items.length);
    return {
      // Stryker disable next-line StringLiteral: 'job' is startBatch's default branch, any other tag goes the same way
      t: 'job',
      jobId: job.job_id,
      url: job.download_url,
      submits: 1,
      sent: { mark: sentMark, balance },
    };
  } catch (err) {
    const reason = splitReason(err, items.length, ctx.splits);
    if (reason) {
      const size = Math.ceil(items.length / 2);
      await journal.append({ t: 'split', batch: id, size }, { durable: true });
      ctx.onJob?.({ t: 'retried', batch: id, rows: items.length, reason });
      // The parts' credits are this batch's, already taken.
      return { t: 'final', leaves: await runParts(ctx, id, items, size, true) };
    }
    const { code, message } = failureOf(err);
    if (code === 'UNCONFIRMED') {
      // The cause alone (a reset, a 502, a cut-off body): the row's error says the rest.
      const cause = (err as Error).cause;
      const why = cause instanceof Error ? cause.message : message;
      await journal.append({ t: 'unconfirmed', batch: id, message: why }, { durable: true });
      const error = unconfirmed(ctx.words, why);
      ctx.markUnconfirmed?.(items);
      return { t: 'final', leaves: [{ ...base, state: 'unconfirmed', code, error, submits: 1 }] };
    }
    await journal.append({ t: 'failed', batch: id, code, message });
    // A POST answered 404: no such endpoint (a wrong base URL), and every batch would be too.
    if (stopsRun(code) || code === 'API_NOT_FOUND') ctx.stop(code, message);
    const error = notEnriched(message);
    return { t: 'final', leaves: [{ ...base, state: 'failed', code, error, submits: 1 }] };
  }
}

/**
 * Takes the credits of `rows` rows from the run's budget before they are sent; when they
 * do not fit, stops the run (exit 5) and returns why the rows are not sent.
 */
function creditsOrStop(ctx: BatchContext, rows: number): string | undefined {
  if (takeCredits(ctx.budget, rows)) return undefined;
  return `not sent: ${stopAtBudget(ctx)}`;
}

/** Stops the run (exit 5) because the spending limit is reached, and says so. */
export function stopAtBudget(ctx: Pick<BatchContext, 'stop' | 'words' | 'budget'>): string {
  const message = budgetReached(ctx.words, ctx.budget.limit);
  ctx.stop('CREDITS_EXHAUSTED', message, true);
  return message;
}

/** The parts of a split batch, one after the other (each to its end). */
async function runParts(
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  size: number,
  paid: boolean,
): Promise<LeafResult[]> {
  const parts: LeafResult[][] = [];
  for (let k = 0; k * size < items.length; k++) {
    const part = items.slice(k * size, (k + 1) * size);
    parts.push(await startBatch(ctx, `${id}.${k}`, part, paid).done);
  }
  return parts.flat();
}

function failureOf(err: unknown): { code: string; message: string } {
  return {
    code: isEnrichError(err) ? err.code : 'INTERNAL',
    message: err instanceof Error ? err.message : String(err),
  };
}

type Base = ReturnType<typeof leafBase>;

/**
 * Polls an accepted job to its end and spools its records. `unsure`: the answer may hold rows
 * the job skipped for credits though it does not show the account dry (readCredits): its
 * balance is trusted for the time the job ran only when this process sent the job, the
 * submission's answer showed a balance, and no rise was seen from then to this download.
 */
async function pollAndSpool(
  ctx: BatchContext,
  batch: { id: string; items: readonly SentItem[] },
  job: { jobId: string; url: string; submits: number; sent?: { mark: number; balance: boolean } },
): Promise<{ leaf: LeafResult; unsure: boolean }> {
  const base: Base = leafBase(batch.id, batch.items);
  const { jobId, submits } = job;
  const leaf = { ...base, jobId, submits };
  let fetchMark = 0;
  const fetch = async () => {
    const answer = await ctx.limit(() => {
      fetchMark = ctx.balance.mark();
      // A Ctrl-C stops polling: a look waiting out a 429 (all calls share one) ends too.
      return ctx.api.results(ctx.kind, jobId, job.url, ctx.env.signal);
    });
    if (answer.state === 'pending' && ctx.onJob) {
      const { processed, total } = answer;
      ctx.onJob({
        t: 'pending',
        batch: base.id,
        job: jobId,
        ...(processed !== undefined && total ? { processed, total } : {}),
      });
    }
    if (answer.state === 'pending') ctx.flight?.pending(base.id, answer.retryAfterMs);
    return answer;
  };
  // Stryker disable next-line OptionalChaining: every batch polled here was journaled (submit) first
  const expires = ctx.journal.state.batches.get(base.id)?.expires;
  let outcome;
  try {
    // wait false: one look at the job (a deadline already passed), no waiting.
    const deadline = ctx.wait ? ctx.deadline : 0;
    // The job time other jobs as large showed times the polls (a service that sends no Retry-After).
    const times = ctx.flight?.jobTimes;
    const jobTime = times && { ms: () => times.fastest(batch.items.length), watch: times.watch };
    const onNotFound = (since: number, until: number) =>
      ctx.onJob?.({ t: 'not-found', batch: base.id, job: jobId, since, until });
    outcome = await pollJob(fetch, {
      deadline,
      env: ctx.env,
      expires,
      ...(jobTime ? { jobTime } : {}),
      onNotFound,
    });
    ctx.flight?.ended(base.id, outcome.state === 'done');
  } catch (err) {
    ctx.flight?.ended(base.id, false);
    const { code, message } = failureOf(err);
    if (code === 'INTERRUPTED') throw err;
    if (stopsRun(code)) ctx.stop(code, message);
    const error = notDownloaded(ctx.words, jobId, message, expires, ctx.env.now());
    ctx.onJob?.({ t: 'ended', batch: base.id, job: jobId, state: 'failed' });
    return { leaf: { ...leaf, state: 'pending', code, error, polls: 1 }, unsure: false };
  }
  if (outcome.state === 'expired') {
    await ctx.journal.append({ t: 'expired', batch: base.id });
    const error = resultsExpired(ctx.words, jobId);
    ctx.onJob?.({ t: 'ended', batch: base.id, job: jobId, state: 'expired' });
    return { leaf: { ...leaf, state: 'expired', error, polls: outcome.polls }, unsure: false };
  }
  if (outcome.state === 'timeout') {
    const { notFoundSince } = outcome;
    const error = stillRunning(ctx.words, jobId, ctx.wait, expires, ctx.env.now(), notFoundSince);
    ctx.onJob?.({ t: 'ended', batch: base.id, job: jobId, state: 'timeout' });
    const polls = outcome.polls;
    return { leaf: { ...leaf, state: 'pending', code: 'TIMEOUT', error, polls }, unsure: false };
  }
  const { records, remainingCredits: remaining, polls } = outcome;
  ctx.balance.seen(remaining, ctx.env.now(), fetchMark);
  const { sent } = job;
  const held = sent !== undefined && sent.balance && !ctx.balance.roseAfter(sent.mark);
  const spooled = await spoolAnswer(ctx.journal, base.id, outcome, held);
  const { credits, creditError, unsure } = spooled;
  ctx.spooled?.(base.id, records);
  ctx.onJob?.({ t: 'done', batch: base.id, job: jobId, records: records.length, credits });
  // Rows it may have skipped for credits are no no-match to keep (cache-use.ts): read as dry.
  await ctx.remember?.(batch.items, records, unsure ? 0 : remaining);
  if (creditError) ctx.stop('CREDITS_EXHAUSTED', OUT_OF_CREDITS);
  return { leaf: { ...leaf, state: 'spooled', credits, remaining, creditError, polls }, unsure };
}
