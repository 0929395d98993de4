import { accountFingerprint, openResultsCache } from '../cache/results-cache.js';
import { pruneFinishedRuns } from '../cache/retention.js';
import { getPaths } from '../config/paths.js';
import { removeStaleSpools } from '../io/spool-stdin.js';
import { holdsUndownloadedJobs } from '../pipeline/run/undownloaded.js';
import type { ResolvedRun, ResultsCache } from '../pipeline/types.js';
import { serviceOf } from '../contract/paths.js';

/** The results cache of one run, bound to its scope, and how to let go of it. */
export interface RunCache {
  cache: ResultsCache;
  /** Waits for the answers written to reach the disk, then closes the cache. */
  close(): Promise<void>;
}

/**
 * Opens the results cache for a resolved run: scoped to the service's base URL, the account
 * (a hash of its API key: another key's run never sees these answers), the kind and the
 * request options. Undefined when the run does not use the cache, or when it cannot be opened
 * (`onWarning` says why: the run goes on without it and sends every row).
 */
export function openRunCache(
  run: Pick<ResolvedRun, 'kind' | 'metadata' | 'cache'>,
  o: {
    baseUrl: string;
    /** The client's `account` (a hash of its key; hashed again here, never stored as given). */
    account: string;
    dir?: string | undefined;
    onWarning?: ((message: string) => void) | undefined;
  },
): RunCache | undefined {
  if ((!run.cache.read && !run.cache.write) || !URL.canParse(o.baseUrl)) return undefined;
  const store = openResultsCache(o.dir ?? getPaths().cacheDir, o.onWarning);
  if (!store) return undefined;
  for (const r of store.repairs) o.onWarning?.(`fixed permissions of ${r}`);
  return {
    cache: store.scoped(scopeOf(run, o.baseUrl, accountFingerprint(o.account))),
    close: () => store.close(),
  };
}

/**
 * Retention at the start of a run: the journals and spools of finished runs older than the
 * run's `runRetentionMs` go, within a quarter of a second (the rest at the next start), and
 * the copies of stdin or of a gzip input that killed runs left in the temp directory, within
 * a tenth of one.
 */
export async function pruneOldRuns(run: Pick<ResolvedRun, 'runsDir' | 'runRetentionMs'>) {
  await removeStaleSpools(undefined, { budgetMs: 100 });
  return pruneFinishedRuns(run.runsDir, {
    olderThanMs: run.runRetentionMs,
    budgetMs: 250,
    holdsJobs: holdsUndownloadedJobs,
  });
}

/** The part of the cache key every request of the run shares. */
function scopeOf(run: Pick<ResolvedRun, 'kind' | 'metadata'>, baseUrl: string, account: string) {
  return { baseUrl: serviceOf(baseUrl), account, kind: run.kind, metadata: run.metadata };
}
