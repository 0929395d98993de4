import type { VerifyState } from '../journal/verify-events.js';
import { asRead } from '../run/cache-use.js';
import { unconfirmedEarlier } from '../run/messages.js';
import type { CachedAnswer, CachePolicy, ResultsCache, RunWords } from '../types.js';
import type { AddressOutcome, VerifyAnswer } from './types.js';

/**
 * What an address already has before anything is sent: a verdict an earlier attempt of the
 * run journaled, a request it sent whose answer never came (it may have been charged), or a
 * fresh answer in the results cache. Undefined: it is to be sent.
 */

/**
 * The outcome an earlier attempt of the same run left for `address`, if it settles it. A request
 * it journaled as sent whose answer line never reached the journal (a full disk stopped the run
 * as the answer came, or a power cut lost the line) is answered when the results cache holds an
 * answer of that address from then on: the attempt put it there before it journaled it.
 */
export function outcomeOfJournal(
  address: string,
  known: VerifyState | undefined,
  resendUnconfirmed: boolean,
  words: RunWords,
  cache?: ResultsCache,
): AddressOutcome | undefined {
  if (!known) return undefined;
  if (known.state === 'sent') {
    const kept = keptAnswer(cache?.get(address), known.at);
    if (kept) return kept;
  }
  if (known.state === 'answered') {
    const { status, charged, remaining, error, at } = known.answer;
    const answer: VerifyAnswer = {
      email: address,
      status,
      credit_charged: charged,
      remaining_credits: remaining ?? 0,
      ...(error ? { error } : {}),
    };
    return { kind: 'answered', answer, from: 'journal', at };
  }
  if (known.state === 'failed' && known.code === 'API_VALIDATION')
    return { kind: 'refused', message: known.message };
  const lost = known.state === 'sent' || known.unconfirmed;
  if (!lost || resendUnconfirmed) return undefined; // nothing was charged: send it again
  return {
    kind: 'failed',
    charge: 'unknown',
    message: `sent by an earlier attempt of this run, whose answer was lost: it may have been charged, so it is not sent again by itself (${words.option('resendUnconfirmed')} sends it again, which may charge it twice)`,
  };
}

/**
 * The answer a cache entry holds to a request sent at `sentAt`, or after it: while a run holds
 * an address's claim no other run of the state directory sends it, so it is that request's.
 * Never one that carried an error (it is not cached) nor a mark; a mark written over it later
 * (this run's own resume marked it lost) leaves it the answer.
 */
function keptAnswer(a: CachedAnswer | undefined, sentAt: number): AddressOutcome | undefined {
  if (!a || a.unconfirmed || a.at < sentAt) return undefined;
  const answer = a.records[0] as VerifyAnswer | undefined;
  if (!answer || typeof answer.status !== 'string' || answer.error) return undefined;
  const kept = { ...answer, credit_charged: a.charged };
  return { kind: 'answered', answer: kept, from: 'journal', at: a.at };
}

/**
 * A fresh verdict from the results cache (never one that carried an error); or, for an address
 * an enrich run sent and never got the answer to (a mark, cache-use.ts), `failed` and not sent,
 * unless `resend` (--resend-unconfirmed) sends it again.
 */
export function outcomeOfCache(
  address: string,
  cache: ResultsCache | undefined,
  policy: CachePolicy,
  now: number,
  unconfirmed: { resend: boolean; words: RunWords },
): { outcome: AddressOutcome; charged: boolean; unconfirmed?: true } | undefined {
  if (!cache || !policy.read) return undefined;
  const hit = asRead(cache.get(address), (a) => now - a.at < policy.maxAgeMs);
  if (hit?.unconfirmed) {
    if (unconfirmed.resend || now - hit.at >= policy.maxAgeMs) return undefined;
    const message = unconfirmedEarlier(unconfirmed.words, hit.at);
    return {
      outcome: { kind: 'failed', message, charge: null },
      charged: false,
      unconfirmed: true,
    };
  }
  const answer = hit?.records[0] as VerifyAnswer | undefined;
  if (!hit || !answer || typeof answer.status !== 'string') return undefined;
  if (answer.error || now - hit.at >= policy.maxAgeMs) return undefined;
  return { outcome: { kind: 'answered', answer, from: 'cache', at: hit.at }, charged: hit.charged };
}
