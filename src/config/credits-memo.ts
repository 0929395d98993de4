import { join } from 'node:path';
import { readMemo, sweepMemo, writeMemo } from './memo-file.js';
import { serviceOf } from '../contract/paths.js';

/** The last remaining credits the service reported for a profile. */
export interface CreditsMemo {
  remaining_credits?: number;
  remaining_verification_credits?: number;
  /** ISO time of the answer. */
  at: string;
  /** Whose balance it is (`creditsScope`): the service's base URL and the key's account. */
  scope?: string;
}

/**
 * The service and account a balance belongs to: the base URL (its origin and path, trailing
 * slashes dropped, as requests are built from it) and the first 16 hex of the key's account
 * (`accountOfKey`, a hash: never the key). A profile used with another key (`ENRICH_API_KEY`)
 * or service shows none of the other's balance; nor does a wrong path on the service's origin
 * (`…/v1`), where nothing answers: the origin alone would show the service's balance there.
 * A base URL without a path gives the scope the origin alone gave before.
 */
export function creditsScope(baseUrl: string, account: string): string {
  return `${serviceOf(baseUrl)} ${account.slice(0, 16)}`;
}

function memoPath(stateDir: string): string {
  return join(stateDir, 'credits.json');
}

function readAll(stateDir: string): Record<string, CreditsMemo> {
  return readMemo<CreditsMemo>(memoPath(stateDir));
}

/** The last known credits of `profile` for `scope` (its service and key), if any were recorded. */
export function readCreditsMemo(
  stateDir: string,
  profile: string,
  scope: string,
): CreditsMemo | undefined {
  const memo = readAll(stateDir)[profile];
  return memo?.scope === scope ? memo : undefined;
}

/** Records the remaining credits of the latest answer (best effort: never throws). */
export function writeCreditsMemo(
  stateDir: string,
  profile: string,
  scope: string,
  update: Omit<CreditsMemo, 'at' | 'scope'>,
  now: Date = new Date(),
): void {
  try {
    const all = readAll(stateDir);
    // Another key's or service's figures are not this one's: replaced, never merged.
    const earlier = all[profile]?.scope === scope ? all[profile] : {};
    all[profile] = { ...earlier, ...update, at: now.toISOString(), scope };
    writeMemo(memoPath(stateDir), all);
  } catch {
    // The memo is a convenience; a read-only state dir must not fail a paid lookup.
  }
}

/** A balance the service reported, as the API client tells it (`onCredits`). */
export interface CreditsSeen {
  kind: 'enrichment' | 'verification';
  remaining: number;
  /** Epoch ms of the answer. */
  at: number;
}

/**
 * The client's `onCredits` for `profile`: every `remaining_credits` any command sees (bulk
 * results included) becomes the memo `enrich auth status` shows, with the answer's time.
 */
export function creditsMemoSink(
  stateDir: string,
  profile: string,
  scope: string,
): (seen: CreditsSeen) => void {
  sweepMemo(memoPath(stateDir));
  return (seen) => {
    const update =
      seen.kind === 'verification'
        ? { remaining_verification_credits: seen.remaining }
        : { remaining_credits: seen.remaining };
    writeCreditsMemo(stateDir, profile, scope, update, new Date(seen.at));
  };
}

/**
 * A sink that writes at most once every `everyMs` (the first balance at once, the latest of
 * each kind after that) and the rest on `flush`: a run of single requests (verify-emails)
 * hears a balance with every answer, and writing the memo file each time (a temp file and a
 * rename) cost more CPU than the requests themselves.
 */
export function throttledSink(
  sink: (seen: CreditsSeen) => void,
  everyMs = 1000,
  now: () => number = Date.now,
): { onCredits(seen: CreditsSeen): void; flush(): void } {
  const latest = new Map<CreditsSeen['kind'], CreditsSeen>();
  let last = -Infinity;
  const flush = () => {
    last = now();
    for (const seen of [...latest.values()].sort((a, b) => a.at - b.at)) sink(seen);
    latest.clear();
  };
  return {
    onCredits(seen) {
      latest.set(seen.kind, seen);
      if (now() - last >= everyMs) flush();
    },
    flush,
  };
}
