import type { EnrichClient } from '../api/client.js';
import { openResultsCache } from '../cache/results-cache.js';
import { pruneFinishedRuns } from '../cache/retention.js';
import { removeStaleSpools } from '../io/spool-stdin.js';
import { holdsUndownloadedJobs } from '../pipeline/run/undownloaded.js';
import { singleLookupScope, singleRequestKey } from '../cache/single-key.js';
import { getPaths } from '../config/paths.js';
import { EnrichError } from '../errors.js';
import { openInput, type InputSource } from '../io/read.js';
import type { CachePolicy, ResultsCache } from '../pipeline/types.js';
import { peekRun } from '../pipeline/journal/journal.js';
import { startsAfresh } from '../pipeline/journal/renew.js';
import { planVerify, type VerifyPlan, type VerifyPlanResume } from '../pipeline/verify/plan.js';
import { identityOf, runVerify, VERIFY_KIND } from '../pipeline/verify/run-verify.js';
import { lostByDeadRuns, withLostMarks } from '../pipeline/verify/lost-elsewhere.js';
import type {
  VerifyApi,
  VerifyProgress,
  VerifyRun,
  VerifySummary,
} from '../pipeline/verify/types.js';
import { checkKeys } from './resolve-run.js';
import {
  resolveVerifyRun,
  runRetentionOf,
  VERIFY_RUN_KEYS,
  type VerifyRunOptions,
} from './verify-options.js';

export type { VerifyPlan, VerifyProgress, VerifySummary };

/** The service of a verification run: a client (its owner closes it), or any VerifyApi. */
export type VerifyService =
  { client: EnrichClient; baseUrl: string } | { api: VerifyApi; baseUrl: string; account?: string };

/** `verifyEmailsFile`: `enrich verify-emails <input> -o <output>` as a function. */
export interface VerifyEmailsOptions extends VerifyRunOptions {
  /** A path (`-` reads `read.stdin`), or an input opened with `openInput` (its owner closes it). */
  input: string | InputSource;
  /** Needed to send; a dry run without one counts no cache hits. */
  service?: VerifyService;
  /** Stops sending (the run then ends with an INTERRUPTED error; its journal is kept). */
  signal?: AbortSignal;
  onProgress?: (p: VerifyProgress) => void;
  onWarning?: (message: string) => void;
  /** Send nothing: resolve and count (`--dry-run`). */
  dryRun?: boolean;
}

const OWN_KEYS = ['input', 'service', 'signal', 'onProgress', 'onWarning', 'dryRun'];

/** POST /email-verification through the client, each call bounded by the run's deadline. */
export function toVerifyApi(client: EnrichClient, deadline?: number): VerifyApi {
  const verify: VerifyApi['verify'] = (address, how = {}) =>
    client.verifyEmail(address, { ...(deadline && { deadline }), ...how });
  return { verify: Object.assign(verify, { journalsAttempts: true }) };
}

/**
 * The results cache as a verification run uses it: keyed by address, in the very entries
 * `enrich verify-email` reads and fills (same scope, same key). Undefined when the run uses
 * no cache or it cannot be opened (`onWarning` says why; every address is then sent).
 */
export function openVerifyCache(o: {
  baseUrl: string;
  account: string;
  policy: CachePolicy;
  dir?: string | undefined;
  onWarning?: ((message: string) => void) | undefined;
}): { cache: ResultsCache; close(): Promise<void> } | undefined {
  if ((!o.policy.read && !o.policy.write) || !URL.canParse(o.baseUrl)) return undefined;
  const store = openResultsCache(o.dir ?? getPaths().cacheDir, o.onWarning);
  if (!store) return undefined;
  for (const r of store.repairs) o.onWarning?.(`fixed permissions of ${r}`);
  const scoped: ResultsCache = store.scoped(
    singleLookupScope(o.baseUrl, o.account, 'email-verification'),
  );
  const key = (address: string) => singleRequestKey({ email: address });
  return {
    cache: {
      get: (address) => scoped.get(key(address)),
      put: (address, answer) => scoped.put(key(address), answer),
      settled: () => scoped.settled?.() ?? Promise.resolve(),
      committed: () => scoped.committed?.() ?? Promise.resolve(),
    },
    close: async () => {
      await store.flushed();
      await store.close();
    },
  };
}

/**
 * Verifies every distinct address of a file and writes every row back with its verdict
 * (`verify_status`), as `enrich verify-emails` does: journaled (the same call resumes),
 * cached, at most `concurrency` requests at once. With `dryRun`, sends nothing and resolves
 * with the plan. Never prints.
 */
export async function verifyEmailsFile(
  o: VerifyEmailsOptions & { dryRun: true },
): Promise<VerifyPlan>;
export async function verifyEmailsFile(o: VerifyEmailsOptions): Promise<VerifySummary>;
export async function verifyEmailsFile(
  o: VerifyEmailsOptions,
): Promise<VerifySummary | VerifyPlan> {
  checkKeys(o, [...VERIFY_RUN_KEYS, ...OWN_KEYS], 'verifyEmailsFile', o.words);
  const { input, service, signal, onProgress, onWarning, dryRun, ...options } = o;
  const read = { ...o.read, ...(onWarning ? { onWarning } : {}) };
  const source = typeof input === 'string' ? await openInput(input, read) : input;
  try {
    for (const w of source.warnings) onWarning?.(w);
    const run = await resolveVerifyRun(options, source);
    for (const w of run.source.warnings.slice(source.warnings.length)) onWarning?.(w);
    const account = service && ('client' in service ? service.client.account : service.account);
    const cache =
      service && account
        ? openVerifyCache({
            baseUrl: service.baseUrl,
            account,
            policy: run.cache,
            dir: o.cacheDir,
            onWarning,
          })
        : undefined;
    try {
      if (dryRun) {
        const resume = account ? await resumeOf(run, account, cache !== undefined) : undefined;
        return await planVerify(
          run,
          {
            cache: cache && (await seenAsTheRunMarksIt(run, account, cache.cache)),
            policy: run.cache,
          },
          Date.now(),
          resume,
        );
      }
      if (!service) throw new EnrichError('USAGE', 'verifyEmailsFile: service is required to send');
      await removeStaleSpools(undefined, { budgetMs: 100 });
      await pruneFinishedRuns(run.runsDir, {
        olderThanMs: runRetentionOf(options),
        budgetMs: 250,
        holdsJobs: holdsUndownloadedJobs,
      });
      const deadline = Date.now() + run.timeoutMs;
      const api = 'api' in service ? service.api : toVerifyApi(service.client, deadline);
      return await runVerify(run, {
        api,
        cache: cache?.cache,
        account,
        signal,
        onProgress,
        onWaiting: onWarning,
      });
    } finally {
      await cache?.close();
    }
  } finally {
    if (typeof input === 'string') await source.close();
  }
}

/**
 * The cache as the run reads it once it has marked what other runs that died lost
 * (lost-elsewhere.ts): the dry run marks nothing, it reads those addresses as marks.
 */
async function seenAsTheRunMarksIt(
  run: VerifyRun,
  account: string | undefined,
  cache: ResultsCache,
): Promise<ResultsCache> {
  if (!run.cache.write) return cache;
  const { key } = identityOf(run, { account }, await run.source.identity());
  const lost = await lostByDeadRuns({ runsDir: run.runsDir, key, account, kind: VERIFY_KIND });
  return lost.size > 0 ? withLostMarks(cache, lost) : cache;
}

/**
 * The journal of the run a real run of these options would resume (read without its lock), for
 * the dry run's plan: none under `restart`, or when the run would start afresh.
 */
async function resumeOf(
  run: VerifyRun,
  account: string,
  cache: boolean,
): Promise<VerifyPlanResume | undefined> {
  if (run.restart) return undefined;
  const { key } = identityOf(run, { account }, await run.source.identity());
  const state = await peekRun(run.runsDir, key);
  if (!state || startsAfresh(state, run.cache, { now: Date.now(), cache })) return undefined;
  return { state, resendUnconfirmed: run.resendUnconfirmed, words: run.words };
}
