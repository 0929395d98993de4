import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { batchKeys } from '../journal/batch-keys.js';
import { peekRun } from '../journal/journal.js';
import { runLockInUse } from '../journal/run-lock.js';
import { notDownloaded } from './earlier-runs.js';

/**
 * The row claims of runs that ended with jobs accepted and not downloaded (their --timeout,
 * Ctrl-C, --no-wait, a kill): those rows were paid for, and their answers are still to come.
 * A run's claims file goes with its process; its rows stay claimed past its end by a marker
 * in the claims directory, `<run key>.ended` (its first line: the pid that ran it), made at
 * the run's end (or by the next run that finds its claims file left by a process gone). The
 * marker holds no key: the claims are the keys of the run's batches not downloaded, as the
 * run kept them beside its journal before each POST (batch-keys.ts), read from there. A run
 * that finds its rows so held settles that run's jobs (earlier-runs.ts, `only`: waited for
 * until its deadline), then takes the answers from the cache. The claims end once no batch
 * of that run is left to download (downloaded by anyone, failed or expired), or its journal
 * is gone (retention): the marker is removed by the next run (or `cache clear`) that sees it.
 */
export const ENDED_SUFFIX = '.ended';

/** One ended run's claims as last read, and the journal's size and time they were read at. */
interface Ended {
  stamp: string;
  pid: number;
  keys: Set<string>;
  /** Its journal's lock is held now (a resume, or a run settling its jobs): waited for. */
  live: boolean;
}

/** The keys of the batches run `run` left not downloaded (none: nothing left, or no journal). */
export async function endedRunKeys(runsDir: string, run: string, now: number): Promise<string[]> {
  const keys: string[] = [];
  for await (const some of leftKeys(runsDir, run, now)) keys.push(...some);
  return keys;
}

/** Whether run `run` holds rows past its end: a batch not downloaded whose keys it kept. */
async function holdsRows(runsDir: string, run: string, now: number): Promise<boolean> {
  for await (const some of leftKeys(runsDir, run, now)) if (some.length > 0) return true;
  return false;
}

/** The kept keys of each batch run `run` left not downloaded, batch by batch. */
async function* leftKeys(runsDir: string, run: string, now: number): AsyncGenerator<string[]> {
  const state = await peekRun(runsDir, run);
  if (!state) return; // its journal gone (retention), or unreadable: nothing held
  for (const b of state.batches.values())
    if (notDownloaded(b, now)) yield await batchKeys(join(runsDir, run), b.id);
}

/** What a marker that cannot be read says (removed meanwhile, or a directory): no pid. */
// Stryker disable next-line StringLiteral: any text that is no number names no pid (0), as this one
const noPid = () => '';

/** The size and time of a run's journal (undefined: gone). */
function stampOf(runsDir: string, run: string): Promise<string | undefined> {
  return stat(join(runsDir, run, 'journal.jsonl')).then(
    (s) => `${s.size}:${s.mtimeMs}`,
    () => undefined,
  );
}

/**
 * Marks run `run` as ended holding rows when its journal has batches not downloaded; else
 * removes its marker (its jobs were downloaded). Best effort: a marker not made leaves those
 * rows unclaimed, as before.
 */
export async function markEnded(
  runsDir: string,
  dir: string,
  run: string,
  pid: number,
  now: number,
): Promise<void> {
  const path = join(dir, `${run}${ENDED_SUFFIX}`);
  try {
    if (!(await holdsRows(runsDir, run, now))) {
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: a marker not there throws, caught below, where nothing more is done
      await rm(path, { force: true });
      return;
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path, `${pid}\n`, { mode: 0o600 });
  } catch {
    // Not kept: a run of another file started later may send those rows again.
  }
}

/** The claims of the ended runs marked in `dir` (all but `own`'s), kept up to date by `refresh`. */
export function endedRuns(runsDir: string, dir: string, own: string | undefined) {
  // The markers seen at the last refresh: one no longer listed (removed meanwhile) is forgotten.
  let known = new Map<string, Ended>();
  return {
    /** Reads the markers among `names` (the claims directory's), dropping those whose claims ended. */
    async refresh(names: ReadonlySet<string>, now: number): Promise<void> {
      const seen = new Map<string, Ended>();
      for (const n of names) {
        if (!n.endsWith(ENDED_SUFFIX)) continue;
        const run = n.slice(0, -ENDED_SUFFIX.length);
        if (run === own) continue;
        const stamp = await stampOf(runsDir, run);
        let e = known.get(run);
        // Stryker disable next-line ConditionalExpression,LogicalOperator: the stamp only spares reading a journal that did not change again (read again, it gives the same claims)
        if (stamp !== undefined && e?.stamp !== stamp) {
          const keys = await endedRunKeys(runsDir, run, now);
          const pid = Number(await readFile(join(dir, n), 'utf8').catch(noPid)); // Number() trims
          // Stryker disable next-line BooleanLiteral: `live` is set below, before anyone reads it
          e = { stamp, pid: Number.isSafeInteger(pid) ? pid : 0, keys: new Set(keys), live: false };
        }
        if (stamp === undefined || !e || e.keys.size === 0) {
          // Force: another run may have removed it meanwhile (the same claims ended for it).
          await rm(join(dir, n), { force: true });
          continue;
        }
        // Stryker disable next-line StringLiteral: the command only words a refusal, which is not read here
        e.live = (await runLockInUse(join(runsDir, run), '')) !== undefined;
        seen.set(run, e);
      }
      known = seen;
    },
    /** The ended run that holds `key`, if any. */
    holderOf(key: string): { pid: number; run: string; ended: true; live: boolean } | undefined {
      for (const [run, e] of known)
        if (e.keys.has(key)) return { pid: e.pid, run, ended: true, live: e.live };
      return undefined;
    },
  };
}

/** Removes the markers of ended runs whose claims ended (`cache clear`); those still holding rows stay. */
export async function removeEndedClaims(
  runsDir: string,
  dir: string,
  names: readonly string[],
  now: number,
): Promise<void> {
  for (const n of names) {
    if (!n.endsWith(ENDED_SUFFIX)) continue;
    const run = n.slice(0, -ENDED_SUFFIX.length);
    if (await holdsRows(runsDir, run, now)) continue;
    // Force: another run may have removed it meanwhile.
    await rm(join(dir, n), { force: true });
  }
}
