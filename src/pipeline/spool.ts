import { open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EnrichError } from '../errors.js';
import { processAlive } from '../io/stale-temps.js';

/**
 * Downloaded results are written to the run's directory as soon as they arrive,
 * one file per batch, atomically (temp file, fsync, rename), so a crash after a
 * download never costs the download, and a half-written spool is never read.
 */

/** The spool file of one batch. */
export function spoolPath(runDir: string, batchId: string): string {
  return join(runDir, `results-${batchId}.json`);
}

/**
 * Writes the results of a batch to its spool file: the records, or (cheaper: no
 * JSON.stringify of what was just parsed) the validated response text as it came.
 */
export async function writeSpool(
  runDir: string,
  batchId: string,
  records: readonly unknown[] | string,
): Promise<void> {
  const target = spoolPath(runDir, batchId);
  const temp = `${target}.${process.pid}.tmp`;
  await sweepDeadTemps(runDir);
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(typeof records === 'string' ? records : JSON.stringify(records));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temp, target);
}

const swept = new Set<string>();

/** Once per run directory and process: removes spool temps of writers killed before their rename. */
async function sweepDeadTemps(runDir: string): Promise<void> {
  if (swept.has(runDir)) return;
  swept.add(runDir);
  for (const entry of await readdir(runDir).catch(() => [] as string[])) {
    const m = /^results-.+\.json\.(\d+)\.tmp$/.exec(entry);
    const pid = m ? Number(m[1]) : undefined;
    if (pid !== undefined && pid !== process.pid && !processAlive(pid))
      await rm(join(runDir, entry), { force: true });
  }
}

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
        hint: 'run the command again with --restart to start this run over',
      },
    );
  }
}

/** Removes a run's spool directory (after `--restart` or `enrich jobs` clean-up). */
export async function removeSpool(runDir: string): Promise<void> {
  await rm(runDir, { recursive: true, force: true });
}
