import type { EnrichError } from '../../errors.js';
import type { Journal } from '../journal/journal.js';
import { markUnconfirmed } from '../run/cache-use.js';
import type { CachePolicy, ResultsCache, RunWords } from '../types.js';
import { outcomeOfCache, outcomeOfJournal } from './prior.js';
import type { AddressEntry, VerifyAnswer } from './types.js';

/** The pool's counts, read by the summary. */
export interface PoolStats {
  sent: number;
  creditsCharged: number;
  cacheHits: number;
  creditsSaved: number;
  answeredEarlier: number;
  unconfirmed: number;
  /** Addresses sent and refused without a charge (out of credits, an error): sent again next run. */
  failed: number;
  notSent: number;
  /** The highest balance an answer implies before it, and the lowest after (null: none seen). */
  before: number | null;
  after: number | null;
}

/** What settling an address needs: where answers go, and how to stop the run. */
export interface OutcomeContext {
  journal: Journal;
  cache: ResultsCache | undefined;
  policy: CachePolicy;
  resendUnconfirmed: boolean;
  now: () => number;
  words: RunWords;
  stats: PoolStats;
  halt(code: string, message: string): void;
  /** The balance reached 0: the next address sent would not be verified (a stop only if one comes). */
  emptied(): void;
}

/** Codes after which no more addresses are sent: the next ones would fail the same way. */
const STOPS = new Set([
  'CREDITS_EXHAUSTED',
  'AUTH_INVALID',
  'AUTH_FORBIDDEN',
  'AUTH_MISSING',
  'RATE_LIMITED',
  'NETWORK',
  'TIMEOUT',
  'SERVER_ERROR',
  'MALFORMED_RESPONSE',
  'INTERRUPTED',
]);

export const OUT_OF_VERIFICATION_CREDITS =
  'verification credits exhausted (the service reported remaining_credits 0)';

/** New counts. */
export function newPoolStats(): PoolStats {
  return {
    sent: 0,
    creditsCharged: 0,
    cacheHits: 0,
    creditsSaved: 0,
    answeredEarlier: 0,
    unconfirmed: 0,
    failed: 0,
    notSent: 0,
    before: null,
    after: null,
  };
}

/** Settles an address from an earlier attempt's journal or the cache; false: it is to be sent. */
export function settleBefore(ctx: OutcomeContext, address: string, entry: AddressEntry): boolean {
  const { stats } = ctx;
  const known = ctx.journal.state.verify?.get(address);
  const prior = outcomeOfJournal(address, known, ctx.resendUnconfirmed, ctx.words, ctx.cache);
  if (prior) {
    entry.outcome = prior;
    if (prior.kind === 'answered') stats.answeredEarlier++;
    if (prior.kind === 'failed') {
      // Sent by an earlier attempt that died before its answer: marked as one this run lost is.
      stats.unconfirmed++;
      markLost(ctx, address);
    }
    return true;
  }
  const hit = outcomeOfCache(address, ctx.cache, ctx.policy, ctx.now(), {
    resend: ctx.resendUnconfirmed,
    words: ctx.words,
  });
  if (!hit) return false;
  entry.outcome = hit.outcome;
  if (hit.unconfirmed) {
    stats.unconfirmed++;
    return true;
  }
  stats.cacheHits++;
  if (hit.charged) stats.creditsSaved++;
  return true;
}

/** An address sent whose answer was lost: no other run (another list holding it) sends it by itself either. */
function markLost(ctx: OutcomeContext, address: string): void {
  if (ctx.cache && ctx.policy.write) markUnconfirmed(ctx.cache, [{ key: address }], ctx.now());
}

/** Records the service's answer: outcome, counts, cache, journal; an empty balance sends no more. */
export function settleAnswered(
  ctx: OutcomeContext,
  address: string,
  entry: AddressEntry,
  answer: VerifyAnswer,
): Promise<void> {
  const { stats } = ctx;
  const at = ctx.now();
  entry.outcome = { kind: 'answered', answer, from: 'service', at };
  const charged = answer.credit_charged === true;
  if (charged) stats.creditsCharged++;
  const left = answer.remaining_credits;
  stats.before = Math.max(stats.before ?? -Infinity, left + (charged ? 1 : 0));
  stats.after = Math.min(stats.after ?? Infinity, left);
  if (left < 1) ctx.emptied();
  // An answer with an in-band error is no verdict to keep (as `enrich verify-email` decides).
  if (ctx.cache && ctx.policy.write && !answer.error)
    ctx.cache.put(address, { records: [{ ...answer }], at, charged });
  return ctx.journal.append({
    t: 'vanswer',
    addr: address,
    status: answer.status,
    charged,
    remaining: left,
    ...(answer.error ? { error: answer.error } : {}),
  });
}

/** Records a request that got no verdict; the errors that would repeat stop the run. */
export function settleFailed(
  ctx: OutcomeContext,
  address: string,
  entry: AddressEntry,
  err: EnrichError,
): Promise<void> {
  const unconfirmed = err.code === 'UNCONFIRMED';
  if (err.code === 'API_VALIDATION') entry.outcome = { kind: 'refused', message: err.message };
  else {
    const tail = unconfirmed
      ? `; not sent again by itself (${ctx.words.option('resendUnconfirmed')} sends it again, which may charge it twice)`
      : '';
    entry.outcome = {
      kind: 'failed',
      message: `${err.message}${tail}`,
      charge: unconfirmed ? 'unknown' : false,
    };
  }
  if (unconfirmed) {
    ctx.stats.unconfirmed++;
    markLost(ctx, address);
  } else if (err.code !== 'API_VALIDATION') ctx.stats.failed++;
  if (STOPS.has(err.code)) ctx.halt(err.code, err.message);
  const e = { t: 'vfail', addr: address, code: err.code, message: err.message } as const;
  return ctx.journal.append({ ...e, unconfirmed });
}
