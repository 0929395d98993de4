import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncDirsDown } from '../../io/sync-dir.js';

/**
 * The keys of a batch's requests (the results cache's own keys of them: hashes, no contact
 * data), kept in the run's directory before its POST. A run killed while its POST was on the
 * wire leaves the batch journaled without an answer, and nothing else says which requests it
 * held: a later run of another file (or of this file changed) reads them here and marks them
 * in the cache as sent without an answer, so that it does not send them again by itself
 * (cache-use.ts `markUnconfirmed`). Flushed to the disk with its directory entry (session 29),
 * alongside the journal's `submit` line and before the POST, so that they outlive a power cut
 * as that line does (keepBatchKeys).
 */
const DIR = 'batch-keys';

/** Flushes a kept keys file's data, then its name and its directory's (from `top` down). */
async function flushKept(path: string, top: string, dir: string): Promise<void> {
  try {
    const handle = await open(path, 'r');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await syncDirsDown(top, dir);
  } catch {
    // Best effort, as keeping them: a later run of another file sends those rows again.
  }
}

/**
 * Keeps the keys of batch `id` (written, not yet flushed) and returns what flushes them. A
 * run writes them before its `submit` line, so a run killed after that line always left them
 * (in the page cache); it flushes them alongside that line's own flush, both before the POST,
 * so that a power cut then loses neither. Best effort: a run is never stopped for them (a full
 * disk, a directory made read-only: a later run sends those rows again, as before).
 */
export async function keepBatchKeys(
  runDir: string,
  id: string,
  keys: readonly string[],
): Promise<() => Promise<void>> {
  try {
    const dir = join(runDir, DIR);
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `${id}.keys`);
    await writeFile(path, `${keys.join('\n')}\n`, { mode: 0o600 });
    return () => flushKept(path, made === undefined ? dir : dirname(made), dir);
  } catch {
    return async () => undefined;
  }
}

/** The keys kept for batch `id` of a run (none: not kept, or gone). */
export async function batchKeys(runDir: string, id: string): Promise<string[]> {
  const text = await readFile(join(runDir, DIR, `${id}.keys`), 'utf8').catch(() => '');
  return text.split('\n').filter((k) => k !== '');
}
