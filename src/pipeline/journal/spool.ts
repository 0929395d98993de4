import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { writeFileAtomic } from '../../io/atomic-write.js';
import { removeStaleTemps } from '../../io/stale-temps.js';

/**
 * Downloaded results are written to the run's directory as soon as they arrive,
 * one file per batch, atomically (writeFileAtomic), so a crash after a
 * download never costs the download, and a half-written spool is never read.
 */

/** The spool file of one batch. */
export function spoolPath(runDir: string, batchId: string): string {
  return join(runDir, `results-${batchId}.json`);
}

/**
 * Writes the results of a batch to its spool file: the records, or (cheaper: no
 * JSON.stringify of what was just parsed, no encoding) the validated response body as it came.
 */
export async function writeSpool(
  runDir: string,
  batchId: string,
  records: readonly unknown[] | Uint8Array,
): Promise<void> {
  if (!swept.has(runDir)) {
    // Once per run directory and process: temps of writers killed before their rename.
    swept.add(runDir);
    await removeStaleTemps(runDir);
  }
  const data = records instanceof Uint8Array ? records : JSON.stringify(records);
  await writeFileAtomic(spoolPath(runDir, batchId), data, { mode: 0o600, sweep: false });
}

const swept = new Set<string>();

/**
 * Reads the records of a batch back from its spool file: an array of records, or a
 * whole results response whose records are under `key` (`contacts` or `companies`).
 */
export async function readSpool(runDir: string, batchId: string, key?: string): Promise<unknown[]> {
  const path = spoolPath(runDir, batchId);
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (Array.isArray(parsed)) return parsed;
    const records =
      key && parsed && typeof parsed === 'object'
        ? (parsed as Record<string, unknown>)[key]
        : undefined;
    if (!Array.isArray(records)) throw new Error(key ? `no "${key}" array` : 'not an array');
    return records;
  } catch (err) {
    throw new EnrichError(
      'INTERNAL',
      `the spooled results ${path} cannot be read: ${(err as Error).message}`,
      {
        cause: err,
        hint: 'start the run over with restart (the --restart flag), which sends and pays for every row again',
      },
    );
  }
}
