import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
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
 *
 * Pids are reused (once they wrap, and from 1 again after a reboot), so beside the lock each
 * holder leaves `lock.pid-<pid>`: the boot and the start time of the process with that pid
 * (Linux). A lock whose pid now belongs to a process started later, or in another boot, is
 * stale. The lock itself still holds only the pid, as earlier builds read it; without that
 * file (another OS, an earlier build) a live pid is taken as the holder.
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
  const me = process.pid;
  const identity = identityOf(me);
  const release = async () => {
    heldHere.delete(mine);
    await rm(path, { force: true });
    await rm(startFile(path, me), { force: true });
  };
  const held = async () => {
    await removeOtherStartFiles(path, me);
    return release;
  };
  try {
    // Written before the lock can name us, so whoever reads our pid in it finds this too.
    if (identity !== undefined) await writeFile(startFile(path, me), identity, { mode: 0o600 });
    for (let attempt = 0; attempt < 4; attempt++) {
      if (await createExclusive(path)) return await held();
      const seen = await readLock(path);
      if (seen === undefined) continue; // its holder just released it
      if (isLive(seen.pid, path)) throw inProgress(seen.pid, command, path);
      if (await replaceStale(path, path, seen, command, 0)) return await held();
    }
    throw new EnrichError('RUN_IN_PROGRESS', `cannot take the run lock ${path}`, {
      hint: 'another enrich process started the same job at the same moment; run again',
    });
  } catch (err) {
    heldHere.delete(mine);
    await rm(startFile(path, me), { force: true });
    throw err;
  }
}

/** The file beside lock `lock` that tells its holder `pid` from a later process given that pid. */
function startFile(lock: string, pid: number): string {
  return `${lock}.pid-${pid}`;
}

/**
 * The boot and the start time (clock ticks since boot, `/proc/<pid>/stat` field 22) of process
 * `pid`: no two processes share both. Undefined where there is no /proc (macOS, Windows).
 */
export function identityOf(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields from the third on follow the command name's closing parenthesis.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start !== undefined && /^\d+$/.test(start) ? `${boot} ${start}` : undefined;
  } catch {
    return undefined;
  }
}

/** True when the process with `pid` is not the one that wrote the lock beside `lock` (pid reused). */
function pidReused(pid: number, lock: string): boolean {
  let recorded: string;
  try {
    recorded = readFileSync(startFile(lock, pid), 'utf8');
  } catch {
    return false; // an earlier build's lock, or another OS: the pid alone
  }
  const now = identityOf(pid);
  return now !== undefined && recorded.trim() !== now;
}

/**
 * Once the lock is ours: the start files of other pids are leftovers (holders killed, or
 * contenders that lost). Removing one a contender still needs only makes its lock, should it
 * take one later, judged by its pid alone.
 */
async function removeOtherStartFiles(lock: string, me: number): Promise<void> {
  const prefix = `${basename(lock)}.pid-`;
  const mine = basename(startFile(lock, me));
  for (const name of await readdir(dirname(lock))) {
    if (name.startsWith(prefix) && name !== mine)
      await rm(join(dirname(lock), name), { force: true });
  }
}

/** Run locks this process holds (or is taking), by pid and path. */
const heldHere = new Set<string>();

/**
 * True when `pid` is another process that still runs and is the one that took the lock beside
 * `lock` (our own pid in a lock is a leftover).
 */
function isLive(pid: number, lock: string): boolean {
  return (
    Number.isSafeInteger(pid) &&
    pid > 0 &&
    pid !== process.pid &&
    processAlive(pid) &&
    !pidReused(pid, lock)
  );
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
  lock: string,
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
    if (isLive(other.pid, lock)) throw inProgress(other.pid, command, claim);
    // Its claimant died between claiming and replacing: take the claim over the same way.
    if (depth >= 8 || !(await replaceStale(lock, claim, other, command, depth + 1))) return false;
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
