import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The keys of a batch's requests (the results cache's own keys of them: hashes, no contact
 * data), kept in the run's directory before its POST. A run killed while its POST was on the
 * wire leaves the batch journaled without an answer, and nothing else says which requests it
 * held: a later run of another file (or of this file changed) reads them here and marks them
 * in the cache as sent without an answer, so that it does not send them again by itself
 * (cache-use.ts `markUnconfirmed`). Not flushed to the disk: a kill leaves it in the page
 * cache; after a power cut it may be gone, and then those rows are sent again.
 */
const DIR = 'batch-keys';

/** Keeps the keys of batch `id` (best effort: a run is never stopped for them). */
export async function keepBatchKeys(
  runDir: string,
  id: string,
  keys: readonly string[],
): Promise<void> {
  try {
    await mkdir(join(runDir, DIR), { recursive: true, mode: 0o700 });
    await writeFile(join(runDir, DIR, `${id}.keys`), `${keys.join('\n')}\n`, { mode: 0o600 });
  } catch {
    // A full disk, a directory made read-only: a later run sends those rows again, as before.
  }
}

/** The keys kept for batch `id` of a run (none: not kept, or gone). */
export async function batchKeys(runDir: string, id: string): Promise<string[]> {
  const text = await readFile(join(runDir, DIR, `${id}.keys`), 'utf8').catch(() => '');
  return text.split('\n').filter((k) => k !== '');
}
