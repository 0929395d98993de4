import {
  cacheDirError,
  cacheError,
  clearCache,
  describeUnusable,
  openResultsCache,
  type CacheStats,
} from '../../../cache/results-cache.js';
import { pruneFinishedRuns } from '../../../cache/retention.js';
import { parseSetting } from '../../../config/settings-table.js';
import { getPaths } from '../../../config/paths.js';
import { resolveSettings } from '../../../config/settings.js';
import { EnrichError, usageError } from '../../../errors.js';
import { acquireRunLock } from '../../../pipeline/journal/run-lock.js';
import { fileSystemError } from '../../../io/output-target.js';
import { removeStaleSpools } from '../../../io/spool-stdin.js';
import { runsDirOf } from '../../../pipeline/run/run.js';
import { removeFreeClaims } from '../../../pipeline/verify/address-claims.js';
import { removeFreeRowClaims, ROW_CLAIMS_DIR } from '../../../pipeline/run/row-claims.js';
import { holdsUndownloadedJobs } from '../../../pipeline/run/undownloaded.js';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { GlobalOptions } from '../../globals.js';
import { printJson, printKeyValues, say, warningLine } from '../../output.js';
import { checkRunsDir } from '../runs-dir.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const warn = (w: string) => process.stderr.write(`${warningLine(w)}\n`);

/** `enrich cache stats`: where the cache is and what it holds. */
export async function cacheStats(globals: GlobalOptions): Promise<void> {
  const { cacheDir } = getPaths();
  const dirError = cacheDirError(cacheDir);
  if (dirError) throw dirError;
  // A cache that cannot be read is an error (exit 2), never "answers 0": a health check
  // reading the stats must tell an empty cache from a broken one.
  let broken: unknown;
  const store = openResultsCache(cacheDir, warn, { onUnusable: (err) => (broken = err) });
  if (!store) throw cacheError(cacheDir, 'cannot be read', broken);
  let s: CacheStats;
  try {
    s = store.stats();
  } finally {
    await store.close();
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
  const dirError = cacheDirError(cacheDir);
  if (dirError) throw dirError;
  await checkRunsDir(runsDirOf(stateDir));
  // The cache's one warning (cannot be opened, written, or its disk is full) means nothing was
  // pruned: said once, as the command's error, after what was done.
  let trouble: string | undefined;
  const store = openResultsCache(cacheDir, (w) => (trouble ??= w), {
    onUnusable: (err) => {
      const { why, hint } = describeUnusable(cacheDir, err);
      trouble ??= `it cannot be opened (${why}); ${hint}`;
    },
  });
  let removed = 0;
  try {
    if (store) removed = await store.prune(Date.now() - maxAge);
  } finally {
    await store?.close();
  }
  // Copies of stdin or of a gzip input that killed runs left in the temp directory (contact data).
  await removeStaleSpools();
  const runs = await pruneFinishedRuns(runsDirOf(stateDir), {
    olderThanMs: settings.runRetentionMs,
    holdsJobs: holdsUndownloadedJobs,
  });
  if (globals.json) printJson({ answers_removed: removed, runs_removed: runs.removed });
  else if (trouble === undefined)
    say(
      globals.quiet,
      `removed ${removed} cached answer(s) and ${runs.removed} finished run(s) from ${cacheDir} and ${runsDirOf(stateDir)}`,
    );
  else say(globals.quiet, `removed ${runs.removed} finished run(s) from ${runsDirOf(stateDir)}`);
  if (trouble !== undefined)
    throw new EnrichError(
      'FILE_SYSTEM',
      `the results cache in ${cacheDir} was not pruned: ${trouble}`,
      {
        location: { file: cacheDir },
      },
    );
}

/**
 * `enrich cache clear`: removes the cache's files and every finished run's journal and results
 * (they hold contact data too). A run not finished holds jobs paid for and perhaps results not
 * yet written: kept, and said, unless `--unfinished` (a run going on now is never touched).
 */
export async function cacheClear(
  globals: GlobalOptions,
  o: { unfinished?: boolean } = {},
): Promise<void> {
  const { cacheDir, stateDir } = getPaths();
  const runsDir = runsDirOf(stateDir);
  const dirError = cacheDirError(cacheDir);
  if (dirError) throw dirError;
  await checkRunsDir(runsDir);
  await clearCache(cacheDir).catch((err: unknown) => {
    throw cacheError(cacheDir, 'cannot be cleared', err);
  });
  await removeStaleSpools();
  const finished = await pruneFinishedRuns(runsDir, {
    olderThanMs: 0,
    holdsJobs: holdsUndownloadedJobs,
  });
  const left = o.unfinished ? await removeUnfinishedRuns(runsDir) : finished.kept;
  await removeFreeLocks(runsDir);
  const removed = finished.removed + (o.unfinished ? finished.kept - left : 0);
  if (globals.json) printJson({ cleared: cacheDir, runs_removed: removed, runs_kept: left });
  else
    say(
      globals.quiet,
      `cleared the results cache in ${cacheDir} and removed ${removed} run(s) from ${runsDir}`,
    );
  if (left > 0)
    warn(
      o.unfinished
        ? `kept ${left} run(s) in ${runsDir} that are going on now: run enrich cache clear --unfinished again once they end`
        : `kept ${left} unfinished run(s) in ${runsDir}: their jobs are paid for, and their results (contact data) wait to be downloaded or written; run their command again to finish them, or erase them too with enrich cache clear --unfinished (their rows are then paid for again)`,
    );
}

/**
 * Removes the locks no run holds now (left by runs that were killed): an address's claim is
 * named for a hash of the address, and a row's claim is a hash of its request, contact data
 * too. Held ones are left.
 */
async function removeFreeLocks(runsDir: string): Promise<void> {
  const hidden = await readdir(runsDir, { withFileTypes: true }).catch(() => []);
  for (const group of hidden) {
    if (!group.isDirectory() || !group.name.startsWith('.')) continue;
    const groupDir = join(runsDir, group.name);
    if (group.name.startsWith('.verify-claims-') || group.name === ROW_CLAIMS_DIR) {
      const remove =
        group.name === ROW_CLAIMS_DIR ? removeFreeRowClaims(runsDir) : removeFreeClaims(groupDir);
      await remove.catch((err: unknown) => {
        throw fileSystemError('write', groupDir, err);
      });
      continue;
    }
    // A session-20 build's sending turn is one lock directory itself; the others hold one each.
    const dirs = group.name.startsWith('.verify-turn-')
      ? [groupDir]
      : (await readdir(groupDir).catch(() => [])).map((name) => join(groupDir, name));
    for (const dir of dirs) {
      const release = await acquireRunLock(dir, 'enrich cache clear').catch(() => undefined);
      if (!release) continue; // held by a run going on now (or not ours to remove)
      await release();
      await rm(dir, { recursive: true, force: true }).catch((err: unknown) => {
        throw fileSystemError('write', dir, err);
      });
    }
    await rmdir(groupDir).catch(() => undefined);
  }
}

/** Removes every run directory whose lock can be taken (no run going on now); resolves to those kept. */
async function removeUnfinishedRuns(runsDir: string): Promise<number> {
  let kept = 0;
  const entries = await readdir(runsDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    // Hidden entries are no runs: the locks of output files and of addresses in flight (a live run's
    // lock there is its own, taken and released with it).
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = join(runsDir, entry.name);
    let release: (() => Promise<void>) | undefined;
    try {
      release = await acquireRunLock(dir, 'enrich cache clear --unfinished');
    } catch (err) {
      // A disk that cannot be written is said as such (exit 2), never an internal error.
      if (!(err instanceof EnrichError)) throw fileSystemError('write', dir, err);
      if (err.code !== 'RUN_IN_PROGRESS') throw err;
      kept++;
      continue;
    }
    await release();
    await rm(dir, { recursive: true, force: true }).catch((err: unknown) => {
      throw fileSystemError('write', dir, err);
    });
  }
  return kept;
}
