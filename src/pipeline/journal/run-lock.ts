import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, open, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { removeStaleTemps, tempNameFor } from '../../io/stale-temps.js';
import { processAlive } from '../../process-alive.js';

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
  if (heldHere.has(mine)) throw heldInThisProcess(command);
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
    // Stryker disable next-line ConditionalExpression: identityOf is defined wherever /proc is; elsewhere a file saying 'undefined' matches no identity, and identityOf(pid) is undefined there too (the pid alone decides)
    if (identity !== undefined) await writeFile(startFile(path, me), identity, { mode: 0o600 });
    // Stryker disable next-line EqualityOperator,UpdateOperator: how many times to look again when the lock changes hands while we look (the test makes it vanish every time: it ends in the error either way)
    for (let attempt = 0; attempt < 4; attempt++) {
      if (await createExclusive(path)) return await held();
      const seen = await readLock(path);
      if (seen === undefined) continue; // its holder just released it
      const holder = liveHolder(seen.pid, path);
      if (holder) throw inProgress(seen.pid, command, path, holder);
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

/**
 * A lock in a directory of its own that comes and goes with it (an output file's):
 * makes `dir` (0700) and takes its lock, making it again if a holder's release removed it
 * meanwhile. The release removes the directory once empty (one left by every output file
 * ever locked would pile up); a directory another run just took is not empty, and stays.
 * Throws as acquireRunLock does (RUN_IN_PROGRESS while a live process holds it).
 */
export async function acquireLockDir(dir: string, command: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const release = await acquireRunLock(dir, command);
      // A holder killed while it made its lock file left the temp file: it would keep the
      // directory from going with the release.
      await removeStaleTemps(dir, 'lock');
      return async () => {
        await release();
        await rmdir(dir).catch(() => undefined);
      };
    } catch (err) {
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the directory removed between the mkdir and the lock (a release at that moment) is made again, three times at most
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 3) continue;
      throw err;
    }
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
  let boot: string;
  let stat: string;
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const start = startTicks(stat);
  // Stryker disable next-line ConditionalExpression: the kernel's stat line always has field 22
  return start === undefined ? undefined : `${boot} ${start}`;
}

/** Field 22 of a `/proc/<pid>/stat` line: the start time, in clock ticks since boot. */
export function startTicks(stat: string): string | undefined {
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself:
  // the fields from the third on follow its last closing parenthesis.
  const start = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[19];
  // Stryker disable next-line ConditionalExpression: the regex tests undefined as the string 'undefined', which it refuses too
  return start !== undefined && /^\d+$/.test(start) ? start : undefined;
}

/**
 * Whether the process with `pid` is the one that wrote the lock beside `lock`: `same`, `reused`
 * (another process got its pid since), or `unknown` (no start file: an earlier build's lock, or
 * another OS; the pid alone then decides).
 */
function holderOf(pid: number, lock: string): 'same' | 'reused' | 'unknown' {
  let recorded: string;
  try {
    recorded = readFileSync(startFile(lock, pid), 'utf8');
  } catch {
    // Stryker disable next-line StringLiteral: any answer but 'same' or 'reused' is read as unknown
    return 'unknown';
  }
  const now = identityOf(pid);
  // Stryker disable next-line ConditionalExpression,StringLiteral: identityOf(pid) is undefined only for a process that ended since kill(pid, 0): stale either way; and as above
  if (now === undefined) return 'unknown';
  return recorded.trim() === now ? 'same' : 'reused';
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
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the file was just listed; force only matters if its owner removed it meanwhile
      await rm(join(dirname(lock), name), { force: true });
  }
}

/** Run locks this process holds (or is taking), by pid and path. */
const heldHere = new Set<string>();

/**
 * Whether `pid`, named in the lock beside `lock`, holds it: `same` (its start file says so),
 * `unknown` (it runs; its pid alone says so), or undefined when it does not (it is gone, it is
 * us, which makes the lock a leftover, or its pid is another process's now).
 */
function liveHolder(pid: number, lock: string): 'same' | 'unknown' | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) {
    return undefined;
  }
  const holder = holderOf(pid, lock);
  return holder === 'reused' ? undefined : holder;
}

function inProgress(
  pid: number,
  command: string,
  path: string,
  holder: 'same' | 'unknown',
): EnrichError {
  const hint = `wait for it to finish, or stop it; then run again: ${command}`;
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `another enrich process (pid ${pid}) is running this same job`,
    {
      details: { pid },
      // Judged by its pid alone, the holder may be another program that got the pid of a run
      // killed by a crash or a reboot: say so, and which file to remove then.
      hint:
        holder === 'same'
          ? hint
          : `${hint} (if pid ${pid} is not enrich, a run killed by a crash or a reboot left the ` +
            `lock and its pid was used again: remove ${path})`,
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
    const holder = liveHolder(other.pid, lock);
    if (holder) throw inProgress(other.pid, command, claim, holder);
    // Its claimant died between claiming and replacing: take the claim over the same way.
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator,BooleanLiteral: the depth bounds a chain of eight dead claimants; the recursion fails only when a third process replaces the dead claimant's claim meanwhile
    if (depth >= 8 || !(await replaceStale(lock, claim, other, command, depth + 1))) return false;
  }
  const now = await readLock(path);
  // Stryker disable next-line OptionalChaining: now is undefined only when a third process took the lock and released it meanwhile
  if (now?.ino !== seen.ino || now.text !== seen.text) {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the claim is ours, just created
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
    // Stryker disable next-line ConditionalExpression,StringLiteral: on EEXIST createInPlace finds the file too and answers false
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    // No hard links on this file system (FAT, some network shares): create it in place.
    return createInPlace(path);
  } finally {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the temp is ours, just created
    await rm(temp, { force: true });
  }
}

async function createInPlace(path: string): Promise<boolean> {
  try {
    await writeFile(path, String(process.pid), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    // Stryker disable next-line ConditionalExpression: where link() fails, an error other than EEXIST here too (EACCES, EROFS) would need a file system the tests cannot make; the mutant then reports "cannot take the run lock" instead
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
    // Stryker disable next-line ConditionalExpression: an error opening a lock file other than ENOENT (EACCES as another user) is not made by the tests
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: inode numbers differ as numbers too below 2^53
    const { ino } = await fh.stat({ bigint: true });
    const text = await fh.readFile('utf8');
    // Stryker disable next-line MethodExpression: Number() ignores the white space trim() removes
    return { pid: Number(text.trim()), text, ino };
  } finally {
    await fh.close();
  }
}

function heldInThisProcess(command: string): EnrichError {
  return new EnrichError('RUN_IN_PROGRESS', 'this process is already running this same job', {
    hint: `wait for that run to finish; then run again: ${command}`,
  });
}

/**
 * Without taking it: the refusal acquireRunLock would give now, as the lock in `dir` is held by
 * a live process (or a run in this one); undefined when it is free or left by a process gone.
 * A lock that cannot be read (an error, not a live run) holds nothing back.
 */
export async function runLockInUse(dir: string, command: string): Promise<EnrichError | undefined> {
  const path = join(dir, 'lock');
  if (heldHere.has(`${process.pid}:${path}`)) return heldInThisProcess(command);
  const seen = await readLock(path).catch(() => undefined);
  if (seen === undefined) return undefined;
  const holder = liveHolder(seen.pid, path);
  return holder ? inProgress(seen.pid, command, path, holder) : undefined;
}

/**
 * Who holds a lock, as a refusal built on its RUN_IN_PROGRESS (`err`) names it, with the
 * holder's pid as that refusal's details: another process, or a run in this one.
 */
export function lockHolder(err: EnrichError): { who: string; details?: { pid: number } } {
  const pid = err.details?.pid;
  return typeof pid === 'number'
    ? { who: `another enrich process (pid ${pid})`, details: { pid } }
    : { who: 'another run in this process' };
}
