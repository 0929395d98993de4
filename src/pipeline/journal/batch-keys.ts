import { mkdir, open, readFile } from 'node:fs/promises';
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
 * as that line does.
 */
const DIR = 'batch-keys';

/** Writes `text` to a new file at `path` and flushes it to the disk. */
async function writeFlushed(path: string, text: string): Promise<void> {
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * Keeps the keys of batch `id` on disk (best effort: a run is never stopped for them; a full
 * disk or a directory made read-only leaves a later run to send those rows again, as before).
 */
export async function keepBatchKeys(
  runDir: string,
  id: string,
  keys: readonly string[],
): Promise<void> {
  try {
    const dir = join(runDir, DIR);
    const made = await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFlushed(join(dir, `${id}.keys`), `${keys.join('\n')}\n`);
    await syncDirsDown(made === undefined ? dir : dirname(made), dir);
  } catch {
    // As above: best effort.
  }
}

/** The keys kept for batch `id` of a run (none: not kept, or gone). */
export async function batchKeys(runDir: string, id: string): Promise<string[]> {
  const text = await readFile(join(runDir, DIR, `${id}.keys`), 'utf8').catch(() => '');
  return text.split('\n').filter((k) => k !== '');
}
