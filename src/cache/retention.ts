import { readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { endsDone } from '../journal-tail.js';

/** What a pruning pass did. */
export interface PruneReport {
  removed: number;
  kept: number;
  /** True when the time bound stopped the pass before every run was looked at. */
  partial: boolean;
}

/**
 * True when a journal (its text) holds a job its resume would still download, whatever its
 * output (pipeline/run/undownloaded.ts: the cache layer does not read journals).
 */
export type HoldsJobs = (journalText: string, now: number) => boolean;

/**
 * Removes the journals and spools of finished runs (their output was written: the journal's
 * last event is `done`, and no job of theirs waits to be downloaded) untouched for
 * `olderThanMs`. Runs still going (a `lock` file), or that never finished (a resume would
 * need them), are kept: a run stopped by `--timeout`, or with batches the service never
 * confirmed, wrote its output and yet holds jobs paid for that its resume downloads. Stops
 * after `budgetMs`, so the start of a run is never held up long: what is left goes at the
 * next start.
 */
export async function pruneFinishedRuns(
  runsDir: string,
  o: { olderThanMs: number; now?: number; budgetMs?: number; holdsJobs: HoldsJobs },
): Promise<PruneReport> {
  const started = Date.now();
  const cutoff = (o.now ?? started) - o.olderThanMs;
  const report: PruneReport = { removed: 0, kept: 0, partial: false };
  const names = await readdir(runsDir).catch(() => [] as string[]);
  // Hidden entries are no runs: the locks of output files and of addresses in flight.
  for (const name of names.filter((n) => !n.startsWith('.'))) {
    if (o.budgetMs !== undefined && Date.now() - started > o.budgetMs) {
      report.partial = true;
      break;
    }
    const dir = join(runsDir, name);
    const fate = await fateOf(dir, cutoff, o.now ?? started, o.holdsJobs);
    if (fate === 'remove') {
      await rm(dir, { recursive: true, force: true });
      report.removed++;
    } else if (fate === 'keep') report.kept++;
  }
  return report;
}

/**
 * What becomes of an entry of the runs directory: a finished run's is removed, any other run's
 * kept; an entry with no journal is no run (a file left there, a run's directory being made):
 * left as it is, and not counted.
 */
async function fateOf(
  dir: string,
  cutoff: number,
  now: number,
  holdsJobs: HoldsJobs,
): Promise<'remove' | 'keep' | 'none'> {
  const journal = join(dir, 'journal.jsonl');
  const st = await stat(journal).catch(() => undefined);
  if (!st?.isFile()) return 'none';
  try {
    if (st.mtimeMs > cutoff) return 'keep';
    if (
      await stat(join(dir, 'lock')).then(
        () => true,
        () => false,
      )
    )
      return 'keep';
    if (!(await endsDone(journal, st.size))) return 'keep';
    return holdsJobs(await readFile(journal, 'utf8'), now) ? 'keep' : 'remove';
  } catch {
    return 'keep'; // a journal that cannot be read: kept, as an unfinished run's
  }
}
