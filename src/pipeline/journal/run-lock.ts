import { randomBytes } from 'node:crypto';
import { link, open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { processAlive, tempNameFor } from '../../io/stale-temps.js';

/** A lock (or claim) file as read: the pid it names (NaN when none) and which file it is. */
interface LockFile {
  readonly pid: number;
  readonly text: string;
  readonly ino: bigint;
}

/**
 * One run of an input at a time: a `lock` file in the run's directory holds the pid
 * of the process working on it. Two overlapping cron jobs would otherwise poll the
 * same jobs and race to write one output; the second one stops with a clear error.
 * A lock left by a process that died (SIGKILL, power cut) is taken over.
 *
 * A lock never exists without its pid (it is written aside, then linked into place),
 * and is never removed to be taken over: a stale one is replaced in one rename by the
 * one process that claimed it (see replaceStale), so exactly one contender wins.
 */
export async function acquireRunLock(dir: string, command: string): Promise<() => Promise<void>> {
  const path = join(dir, 'lock');
  const mine = `${process.pid}:${path}`;
  // A lock naming this very process reads as a leftover (a reused pid): two runs of one job
  // inside one process (a library calling enrichFile twice at once) are told apart here,
  // taken before the first await so the second caller sees it.
  if (heldHere.has(mine)) {
    throw new EnrichError('RUN_IN_PROGRESS', 'this process is already running this same job', {
      hint: `wait for that run to finish; then run again: ${command}`,
    });
  }
  heldHere.add(mine);
  const release = async () => {
    heldHere.delete(mine);
    await rm(path, { force: true });
  };
  try {
    for (let attempt = 0; attempt < 4; attempt++) {
      if (await createExclusive(path)) return release;
      const seen = await readLock(path);
      if (seen === undefined) continue; // its holder just released it
      if (isLive(seen.pid)) throw inProgress(seen.pid, command, path);
      if (await replaceStale(path, seen, command, 0)) return release;
    }
    throw new EnrichError('RUN_IN_PROGRESS', `cannot take the run lock ${path}`, {
      hint: 'another enrich process started the same job at the same moment; run again',
    });
  } catch (err) {
    heldHere.delete(mine);
    throw err;
  }
}

/** Run locks this process holds (or is taking), by pid and path. */
const heldHere = new Set<string>();

/** True when `pid` is another process that still runs (our own pid in a lock is a leftover). */
function isLive(pid: number): boolean {
  return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid);
}

function inProgress(pid: number, command: string, path: string): EnrichError {
  // A lock holds only a pid, and pids are reused (after a reboot, or once they wrap): the lock
  // of a run killed by a power cut can name a process that is not enrich at all.
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `another enrich process (pid ${pid}) is running this same job`,
    {
      hint:
        `wait for it to finish, or stop it; then run again: ${command} ` +
        `(if pid ${pid} is not enrich, a run killed by a crash or a reboot left the lock ` +
        `and its pid was used again: remove ${path})`,
    },
  );
}

/**
 * Replaces the stale file `seen` at `path` (a lock, or a claim whose claimant died) by one naming
 * us. False when it changed first, so the caller looks again.
 */
async function replaceStale(
  path: string,
  seen: LockFile,
  command: string,
  depth: number,
): Promise<boolean> {
  // The claim is named for the stale file itself: of all the processes that saw it stale,
  // exactly one creates the claim. A claim made after the file was replaced fails the check below.
  const claim = `${path}.stale-${seen.ino}`;
  if (!(await createExclusive(claim))) {
    const other = await readLock(claim);
    if (other === undefined) return false; // its claimant is done: look again
    if (isLive(other.pid)) throw inProgress(other.pid, command, claim);
    // Its claimant died between claiming and replacing: take the claim over the same way.
    if (depth >= 8 || !(await replaceStale(claim, other, command, depth + 1))) return false;
  }
  const now = await readLock(path);
  if (now?.ino !== seen.ino || now.text !== seen.text) {
    await rm(claim, { force: true });
    return false;
  }
  // Atomic, so there is never a moment without a lock for a newcomer to create one in.
  await rename(claim, path);
  return true;
}

/** Creates `path` holding our pid, never seen empty; false when it exists. */
async function createExclusive(path: string): Promise<boolean> {
  const temp = join(
    dirname(path),
    tempNameFor(basename(path), process.pid, randomBytes(4).toString('hex')),
  );
  await writeFile(temp, String(process.pid), { flag: 'wx', mode: 0o600 });
  try {
    await link(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    // No hard links on this file system (FAT, some network shares): create it in place.
    return createInPlace(path);
  } finally {
    await rm(temp, { force: true });
  }
}

async function createInPlace(path: string): Promise<boolean> {
  try {
    await writeFile(path, String(process.pid), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Reads a lock or claim file; undefined when there is none. */
async function readLock(path: string): Promise<LockFile | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const { ino } = await fh.stat({ bigint: true });
    const text = await fh.readFile('utf8');
    return { pid: Number(text.trim()), text, ino };
  } finally {
    await fh.close();
  }
}
