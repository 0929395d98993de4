import { openResultsCache } from '../../../cache/results-cache.js';
import { singleLookupScope, singleRequestKey } from '../../../cache/single-key.js';
import { parseTypedDuration } from '../../../config/duration.js';
import { getPaths } from '../../../config/paths.js';
import { maxAgeOf } from '../../../pipeline/run/cache-use.js';
import type { Service } from '../../context.js';
import { say } from '../../output.js';
import type { CacheFlags } from './cache-flags.js';

export type { CacheFlags } from './cache-flags.js';

/** What the cache needs to know of one lookup's answer. */
export interface LookupAnswer<T> {
  /** The endpoint, as the cache keeps answers of different endpoints apart. */
  endpoint: 'contact' | 'company' | 'email-verification';
  /** The request without its metadata, and the metadata (options that change the answer). */
  request: Readonly<Record<string, unknown>>;
  /** The key it is kept under, when not the request's own (`singleRequestKey`). */
  key?: string;
  metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Whether the answer may be kept: never one that ran out of credits. */
  keep(answer: T): boolean;
  /** The answer has no match (kept at most a week when free, like the bulk runs' no-match answers). */
  noMatch(answer: T): boolean;
  charged(answer: T): boolean;
}

/**
 * Runs one single lookup through the results cache: a fresh cached answer is returned
 * without a request (and `cachedAt` says when it was looked up); otherwise the service is
 * asked and its answer kept. The embedded sandbox (`--sandbox`) is a new account each time:
 * its answers are neither read nor kept, as in the bulk runs.
 */
export async function cachedLookup<T>(
  service: Service,
  flags: CacheFlags,
  what: LookupAnswer<T>,
  ask: () => Promise<T>,
  quiet: boolean,
): Promise<{ answer: T; cachedAt?: number }> {
  const maxAgeMs =
    flags.maxAge === undefined
      ? service.settings.cacheMaxAgeMs
      : parseTypedDuration(flags.maxAge, '--max-age');
  if (flags.cache === false || service.sandbox) return { answer: await ask() };
  const store = openResultsCache(getPaths().cacheDir, (m) => say(quiet, `enrich: warning: ${m}`));
  if (!store) return { answer: await ask() };
  for (const r of store.repairs) say(quiet, `enrich: warning: fixed permissions of ${r}`);
  try {
    const cache = store.scoped(
      singleLookupScope(service.baseUrl, service.client.account, what.endpoint, what.metadata),
    );
    const key = what.key ?? singleRequestKey(what.request);
    const hit = flags.refresh ? undefined : cache.get(key);
    const answer = hit?.records[0] as T | undefined;
    if (hit && answer !== undefined) {
      const age = Date.now() - hit.at;
      if (age < maxAgeOf(maxAgeMs, { noMatch: what.noMatch(answer), charged: hit.charged }))
        return { answer, cachedAt: hit.at };
    }
    const fresh = await ask();
    if (what.keep(fresh)) {
      const record = fresh as unknown as Record<string, unknown>;
      cache.put(key, { records: [record], at: Date.now(), charged: what.charged(fresh) });
    }
    return { answer: fresh };
  } finally {
    await store.flushed();
    await store.close();
  }
}

/** Says on stderr that an answer came from the cache, and when it was looked up. */
export function sayCached(quiet: boolean, cachedAt: number | undefined): void {
  if (cachedAt === undefined) return;
  say(
    quiet,
    `enrich: answered from the results cache (looked up ${new Date(cachedAt).toISOString()}); nothing was sent or charged, and remaining_credits is as of then (--refresh looks it up again)`,
  );
}
