import { clearCache, openResultsCache, type CacheStats } from '../../../cache/results-cache.js';
import { pruneFinishedRuns } from '../../../cache/retention.js';
import { parseSetting } from '../../../config/settings-table.js';
import { getPaths } from '../../../config/paths.js';
import { resolveSettings } from '../../../config/settings.js';
import { EnrichError, usageError } from '../../../errors.js';
import { runsDirOf } from '../../../pipeline/run/run.js';
import type { GlobalOptions } from '../../globals.js';
import { printJson, printKeyValues, say, warningLine } from '../../output.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const warn = (w: string) => process.stderr.write(`${warningLine(w)}\n`);

/** `enrich cache stats`: where the cache is and what it holds. */
export async function cacheStats(globals: GlobalOptions): Promise<void> {
  const { cacheDir } = getPaths();
  const store = openResultsCache(cacheDir, warn);
  let s: CacheStats = { entries: 0, charged: 0, oldest: null, newest: null };
  try {
    if (store) s = store.stats();
  } finally {
    await store?.close();
  }
  const out = {
    dir: cacheDir,
    answers: s.entries,
    charged: s.charged,
    oldest: iso(s.oldest),
    newest: iso(s.newest),
  };
  if (globals.json) printJson(out);
  else printKeyValues(out);
}

/** `enrich cache prune`: answers older than the limit, and finished runs past their retention. */
export async function cachePrune(
  olderThan: string | undefined,
  globals: GlobalOptions,
): Promise<void> {
  const settings = resolveSettings({ globals });
  let maxAge = settings.cacheMaxAgeMs;
  if (olderThan !== undefined) {
    try {
      maxAge = parseSetting('cacheMaxAgeMs', olderThan);
    } catch (err) {
      throw usageError(`--older-than: ${(err as Error).message}`);
    }
  }
  const { cacheDir, stateDir } = getPaths();
  // The cache's one warning (cannot be opened, written, or its disk is full) means nothing was
  // pruned: said once, as the command's error, after what was done.
  let trouble: string | undefined;
  const store = openResultsCache(cacheDir, (w) => (trouble ??= w));
  let removed = 0;
  try {
    if (store) removed = await store.prune(Date.now() - maxAge);
  } finally {
    await store?.close();
  }
  const runs = await pruneFinishedRuns(runsDirOf(stateDir), {
    olderThanMs: settings.runRetentionMs,
  });
  if (globals.json) printJson({ answers_removed: removed, runs_removed: runs.removed });
  else
    say(
      globals.quiet,
      `removed ${removed} cached answer(s) and ${runs.removed} finished run(s) from ${cacheDir} and ${runsDirOf(stateDir)}`,
    );
  if (trouble !== undefined)
    throw new EnrichError('FILE_SYSTEM', `the results cache was not pruned: ${trouble}`);
}

/** `enrich cache clear`: removes the cache's files. */
export async function cacheClear(globals: GlobalOptions): Promise<void> {
  const { cacheDir } = getPaths();
  await clearCache(cacheDir);
  if (globals.json) printJson({ cleared: cacheDir });
  else say(globals.quiet, `cleared the results cache in ${cacheDir}`);
}
