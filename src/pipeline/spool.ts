import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EnrichError } from '../errors.js';

/**
 * Downloaded results are written to the run's directory as soon as they arrive,
 * one file per batch, atomically (temp file, fsync, rename), so a crash after a
 * download never costs the download, and a half-written spool is never read.
 */

/** The spool file of one batch. */
export function spoolPath(runDir: string, batchId: string): string {
  return join(runDir, `results-${batchId}.json`);
}

/** Writes the records of a batch to its spool file. */
export async function writeSpool(
  runDir: string,
  batchId: string,
  records: readonly unknown[],
): Promise<void> {
  const target = spoolPath(runDir, batchId);
  const temp = `${target}.${process.pid}.tmp`;
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(records));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temp, target);
}

/** Reads the records of a batch back from its spool file. */
export async function readSpool(runDir: string, batchId: string): Promise<unknown[]> {
  const path = spoolPath(runDir, batchId);
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    if (!Array.isArray(parsed)) throw new Error('not an array');
    return parsed;
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
