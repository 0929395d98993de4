import { toBulkApi } from '../api/bulk-api.js';
import type { EnrichClient } from '../api/client.js';
import { EnrichError } from '../errors.js';
import { openInput, type InputSource } from '../io/read.js';
import type { PollEnv } from '../pipeline/run/poll.js';
import { runBulk, type RunSummary } from '../pipeline/run/run.js';
import type { BulkApi, JobEvent, RunProgress } from '../pipeline/types.js';
import { BULK_RUN_KEYS, type BulkRunOptions } from './options.js';
import { checkKeys, resolveRun } from './resolve-run.js';
import { openRunCache, pruneOldRuns } from './run-cache.js';

// The library's one-call bulk run: it joins the client (api/), the settings' defaults
// (config/) and the pipeline, so it sits outside pipeline/, which never reaches into api/
// or config/ (DESIGN.md section 2).

/** `enrichFile`: one bulk enrichment of a file, with the CLI's defaults for everything left out. */
export interface EnrichFileOptions extends BulkRunOptions {
  /** A path (`-` reads `read.stdin`), or an input already opened with `openInput` (its owner closes it). */
  input: string | InputSource;
  /**
   * The service: a client from `createClient` (its owner closes it), or any BulkApi with its
   * base URL (and the account it bills, any stable name of it, for the results cache; without
   * one, such a run neither reads nor fills the cache).
   */
  service:
    { client: EnrichClient; baseUrl: string } | { api: BulkApi; baseUrl: string; account?: string };
  /** Stops submitting and polling (the run then ends with an INTERRUPTED error; its journal is kept). */
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** Told what happens to each job: submitted, running (with the service's progress, if any), done, sent again. */
  onJob?: (event: JobEvent) => void;
  /** What the user should know about the file and the run before anything is spent. */
  onWarning?: (message: string) => void;
  /** Clock, sleep and randomness of the poll loop (tests). */
  env?: Partial<PollEnv>;
}

const OWN_KEYS = ['input', 'service', 'signal', 'onProgress', 'onJob', 'onWarning', 'env'];

/** Abortable sleep of the poll loop. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Enriches a file end to end, as `enrich contacts|companies <input> -o <output>` does:
 * reads and maps it, sends its valid rows in bulk jobs (journaled: the same call resumes),
 * and writes every row back with its status and enrichment. Never prints.
 */
export async function enrichFile(o: EnrichFileOptions): Promise<RunSummary> {
  checkKeys(o, [...BULK_RUN_KEYS, ...OWN_KEYS], 'enrichFile', o.words);
  const { input, service, signal, onProgress, onJob, onWarning, env, ...options } = o;
  if (typeof service !== 'object' || service === null || !('client' in service || 'api' in service))
    throw new EnrichError(
      'USAGE',
      'enrichFile: service is required: { client, baseUrl } (a client from createClient) or { api, baseUrl }',
    );
  const read = { ...o.read, ...(onWarning ? { onWarning } : {}) };
  const source = typeof input === 'string' ? await openInput(input, read) : input;
  try {
    for (const w of source.warnings) onWarning?.(w);
    const run = await resolveRun(options, source);
    for (const w of run.source.warnings.slice(source.warnings.length)) onWarning?.(w);
    const api = 'api' in service ? service.api : toBulkApi(service.client);
    const pollEnv = {
      now: Date.now,
      sleep,
      random: Math.random,
      ...env,
      ...(signal && { signal }),
    };
    await pruneOldRuns(run);
    const account = 'client' in service ? service.client.account : service.account;
    const { baseUrl } = service;
    const cache = account
      ? openRunCache(run, { baseUrl, account, dir: o.cacheDir, onWarning })
      : undefined;
    try {
      return await runBulk(run, {
        api,
        baseUrl,
        account,
        env: pollEnv,
        onProgress,
        ...(onJob && { onJob }),
        onWarning,
        cache: cache?.cache,
      });
    } finally {
      await cache?.close();
    }
  } finally {
    if (typeof input === 'string') await source.close();
  }
}
