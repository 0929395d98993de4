import { EnrichError } from '../../errors.js';
import type { Journal } from '../journal/journal.js';
import { budgetReached } from '../run/messages.js';
import type { CachePolicy, ResultsCache, RunWords, StopReason, SendControl } from '../types.js';
import {
  newPoolStats,
  OUT_OF_VERIFICATION_CREDITS,
  settleAnswered,
  settleBefore,
  settleFailed,
  type OutcomeContext,
} from './outcomes.js';
import type { AddressClaims, Claim } from './address-claims.js';
import type { AddressEntry, VerifyAnswer, VerifyApi } from './types.js';

export type { PoolStats } from './outcomes.js';

/** Everything the pool needs, fixed for the run. */
export interface PoolContext {
  api: VerifyApi;
  journal: Journal;
  cache: ResultsCache | undefined;
  policy: CachePolicy;
  concurrency: number;
  maxCredits: number | undefined;
  deadline: number;
  resendUnconfirmed: boolean;
  now: () => number;
  signal: AbortSignal | undefined;
  words: RunWords;
  /** Told each time a request started has its outcome (the output follows the answers). */
  onSettled?: (() => void) | undefined;
  /** Claims each address before it is sent (absent: no cache, nothing to take from another run). */
  claims?: AddressClaims | undefined;
}

/** Why the next address may not be sent, if it may not. */
function stopBeforeSend(ctx: PoolContext, sent: number): StopReason | undefined {
  if (ctx.signal?.aborted) return { code: 'INTERRUPTED', message: 'interrupted' };
  if (ctx.maxCredits !== undefined && sent >= ctx.maxCredits)
    return { code: 'CREDITS_EXHAUSTED', message: budgetReached(ctx.words, ctx.maxCredits) };
  if (ctx.now() >= ctx.deadline)
    return {
      code: 'PARTIAL',
      message: `${ctx.words.option('timeoutMs')} reached before every address was sent`,
    };
  return undefined;
}

/**
 * How an address is sent: stopped by a Ctrl-C, journaled around each attempt. `refused` says
 * whether its last attempt was refused unprocessed (a 429): an address that ends so was never
 * sent, whatever its error (it is not counted sent, nor against --max-credits).
 */
function sendControl(ctx: PoolContext, address: string): SendControl & { refused(): boolean } {
  // A Ctrl-C ends its wait to be sent (a 429's Retry-After), not a request on its way.
  if (!ctx.api.verify.journalsAttempts) return { stop: ctx.signal, refused: () => false };
  let refused = false;
  return {
    stop: ctx.signal,
    refused: () => refused,
    // On disk before each attempt: a run killed from there on knows it may have been charged,
    // and one killed while it waited (out a 429) knows it was not.
    hooks: {
      sending: () => {
        refused = false;
        return ctx.journal.append({ t: 'vsend', addr: address }, { durable: true });
      },
      notSent: ({ code, message }) => {
        refused = true;
        return ctx.journal.append({ t: 'vfail', addr: address, code, message, unconfirmed: false });
      },
    },
  };
}

/** Why an address another run still sent when this run's time was up is not sent. */
const heldElsewhere = (ctx: PoolContext, who: string) =>
  `${who} was still verifying this address when this run's time was up (${ctx.words.option('timeoutMs')})`;

/** Sends one address and settles it: its verdict, or why it has none. */
async function sendOne(
  ctx: PoolContext,
  out: OutcomeContext,
  address: string,
  entry: AddressEntry,
): Promise<void> {
  const how = sendControl(ctx, address);
  // On disk before the request, by this pool when the api cannot tell each attempt.
  if (!how.hooks) await ctx.journal.append({ t: 'vsend', addr: address }, { durable: true });
  let answer: VerifyAnswer;
  try {
    answer = await ctx.api.verify(address, how);
  } catch (err) {
    if (!(err instanceof EnrichError)) throw err;
    if (how.refused()) out.stats.sent--;
    return settleFailed(out, address, entry, err);
  }
  await settleAnswered(out, address, entry, answer);
  await ctx.cache?.settled?.();
  // Committed before the claim is given back: a run waiting for it reads the answer there.
  if (ctx.claims) await ctx.cache?.committed?.();
}

/**
 * Verifies addresses, at most `concurrency` at once: each distinct address is settled once,
 * from the journal (an earlier attempt), the results cache, or one request journaled before
 * it is sent and after it is answered. `add` waits while the pool is full, so the reader
 * never runs far ahead. After a stop (credits, budget, auth, deadline), addresses are no
 * longer sent: they end `failed`, "not sent", and the next run sends them.
 */
export function createVerifyPool(ctx: PoolContext) {
  let stop: StopReason | undefined;
  // A bug in a request's task (never an API error: those are outcomes), rethrown by drain.
  let bug: { error: unknown } | undefined;
  // The balance reached 0: no more is sent, and the run stops early only if an address is left.
  let emptied = false;
  let inFlight = 0;
  // An address waiting for room in the pool: found, not sent, not settled.
  let waiting = 0;
  const waiters: (() => void)[] = [];
  const running = new Set<Promise<void>>();
  const out: OutcomeContext = {
    ...ctx,
    stats: newPoolStats(),
    halt: (code, message) => void (stop ??= { code, message }),
    emptied: () => void (emptied = true),
  };
  const { stats } = out;
  const stopNow = () =>
    (stop ??=
      stopBeforeSend(ctx, stats.sent) ??
      (emptied ? { code: 'CREDITS_EXHAUSTED', message: OUT_OF_VERIFICATION_CREDITS } : undefined));
  const notSent = (entry: AddressEntry, why: string) => {
    entry.outcome = { kind: 'failed', message: `not sent: ${why}`, charge: null };
    stats.notSent++;
  };

  const start = (address: string, entry: AddressEntry, release?: () => Promise<void>) => {
    inFlight++;
    stats.sent++;
    const task = sendOne(ctx, out, address, entry)
      .finally(() => release?.())
      .catch((error: unknown) => {
        // The journal that cannot be written (a full disk) ends the run as itself: the rows not
        // sent say why; anything else is a bug.
        bug ??= { error };
        if (error instanceof EnrichError) out.halt(error.code, error.message);
        else out.halt('INTERNAL', 'internal error');
      })
      .finally(() => {
        inFlight--;
        running.delete(task);
        waiters.shift()?.();
        ctx.onSettled?.();
      });
    running.add(task);
  };

  return {
    stats,
    stopReason: () => stop,
    /** Addresses added without an outcome yet: in flight, or waiting for room to be sent. */
    unsettled: () => inFlight + waiting,
    /** Settles a new distinct address, or starts its request (waiting while the pool is full). */
    async add(address: string, entry: AddressEntry): Promise<void> {
      if (settleBefore(out, address, entry)) return;
      waiting++;
      while (inFlight >= ctx.concurrency) await new Promise<void>((r) => waiters.push(r));
      let claim: Claim | undefined;
      if (!stopNow()) claim = await ctx.claims?.take(address);
      waiting--;
      if (claim && 'heldBy' in claim) {
        // Interrupted while waiting: the run stops (INTERRUPTED); else its time is up.
        const interrupted = ctx.signal?.aborted ? stopNow()?.message : undefined;
        return notSent(entry, interrupted ?? heldElsewhere(ctx, claim.heldBy));
      }
      // Another run's answer, cached while this one waited for its claim (or just before).
      if (claim && settleBefore(out, address, entry)) return claim.release();
      if (!stopNow()) return start(address, entry, claim?.release);
      await claim?.release();
      notSent(entry, (stop as StopReason).message);
    },
    /** Resolves once every request started has its outcome (rejects on a bug only). */
    async drain(): Promise<void> {
      while (running.size > 0) await Promise.all([...running]);
      if (bug) throw bug.error;
    },
  };
}

export type VerifyPool = ReturnType<typeof createVerifyPool>;
