import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { writeFileAtomic } from '../../io/atomic-write.js';
import { removeStaleTemps } from '../../io/stale-temps.js';
import { readCredits } from '../../contract/credits.js';
import { stateWriteError, type Journal } from './journal.js';

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
  const path = spoolPath(runDir, batchId);
  try {
    if (!swept.has(runDir)) {
      // Once per run directory and process: temps of writers killed before their rename.
      swept.add(runDir);
      await removeStaleTemps(runDir);
    }
    const data = records instanceof Uint8Array ? records : JSON.stringify(records);
    await writeFileAtomic(path, data, { mode: 0o600, sweep: false });
  } catch (err) {
    // A full disk or a removed state directory: FILE_SYSTEM naming the file, the journal kept
    // (the job is journaled, so the same command downloads it again, paying nothing twice).
    throw stateWriteError(path, err);
  }
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

/**
 * Spools a downloaded answer of batch `batch` and journals it, flushed to disk before the run
 * goes on: what it charged (`credit_charged`), whether it showed the account dry (a record
 * not charged, without data, too few credits left), and whether, not showing it dry, it may
 * still hold rows the job skipped for credits (`unsure`: such a record, read with a balance
 * that was not seen to hold while the job ran, `balanceHeld` false): all read from its data,
 * never its wording (readCredits).
 */
export async function spoolAnswer(
  journal: Journal,
  batch: string,
  answer: {
    records: readonly Record<string, unknown>[];
    remainingCredits: number;
    body?: Uint8Array;
  },
  balanceHeld = false,
): Promise<{ credits: number; creditError: boolean; unsure: boolean }> {
  const { records, remainingCredits: remaining } = answer;
  let credits = 0;
  for (const r of records) if (r.credit_charged === true) credits++;
  const { dry: creditError, unsure } = readCredits(records, remaining, balanceHeld);
  // The response body re-parses to exactly these records (the schemas only check, never
  // transform), so its bytes are spooled as they came rather than stringified again.
  await writeSpool(journal.dir, batch, answer.body ?? records);
  await journal.append(
    { t: 'spooled', batch, records: records.length, credits, remaining, creditError, unsure },
    { durable: true },
  );
  return { credits, creditError, unsure };
}
