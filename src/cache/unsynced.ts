import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { uptime } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../process-alive.js';
import { CACHE_FILE } from './lmdb-file.js';

/**
 * Marks of answers committed to the cache but not yet on the disk.
 *
 * The cache commits without flushing (lmdb's `noSync`) and flushes the file once, when a run
 * closes it: a flush per commit (one per job of a bulk run) forced each commit's scattered
 * B-tree pages out at once, and cost 14% of a cold run's CPU at 1M rows (BENCHMARKS.md,
 * session 15). A process that dies loses nothing by it (its commits are in the kernel's page
 * cache); a machine that stops (power cut, kernel crash) may lose pages a commit's meta page
 * points at, and lmdb trusts its file: it could read garbage, or crash.
 *
 * So a process leaves a mark before its first write (its pid and which boot of the machine it
 * runs in, flushed to the disk with its directory entry) and removes it once its commits are
 * flushed. A mark of an earlier boot means the machine stopped while the file had unflushed
 * commits: the cache is started anew (its answers are looked up again, never served from a
 * file that may be damaged). A mark of this boot whose process is gone (killed) is removed by
 * the next process that flushes the file: one flush writes every process's commits.
 */

/** A mark's file name: `results-v2.mdb-unsynced-<pid>-<random>`. */
export const MARK_PREFIX = `${CACHE_FILE}-unsynced-`;

/** A mark is written under this prefix, then renamed: a mark is never seen half written. */
export const MARKING_PREFIX = `${CACHE_FILE}-marking-`;

/** Which boot of the machine: the kernel's boot id where there is one, and when it booted. */
export interface Boot {
  id: string;
  /** Epoch ms, from the uptime: moves with the clock, hence the slack in `sameBoot`. */
  at: number;
}

/** Two boot times this far apart or less are one boot (the clock may be set in between). */
const BOOT_SLACK_MS = 120_000;

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

/** This boot of the machine. */
export function currentBoot(): Boot {
  // Stryker disable next-line StringLiteral: replaced by the kernel's id wherever the tests run (Linux)
  let id = '';
  try {
    id = readFileSync(BOOT_ID_FILE, 'utf8').trim();
  } catch {
    // not Linux: the boot time alone tells boots apart
  }
  return { id, at: Date.now() - Math.round(uptime() * 1000) };
}

/** True when `a` and `b` are the same boot: by the kernel's id when both have one, else by time. */
export function sameBoot(a: Boot, b: Boot): boolean {
  if (a.id !== '' && b.id !== '') return a.id === b.id;
  return Math.abs(a.at - b.at) <= BOOT_SLACK_MS;
}

interface Mark {
  pid: number;
  boot: Boot;
}

/** One process's writes to a cache between its flushes. */
export interface MarkedWrites {
  /** Called before each write: the first since a flush leaves the mark. Throws when it cannot. */
  beforeWrite(): void;
  /**
   * Once `committed` settles (the writes made so far are committed), flushes the file if this
   * process wrote since its last flush, then removes the marks the flush covered. A write made
   * meanwhile may not be on the disk: its mark stays for the next flush. Rejects when the
   * commits or the flush fail (the mark stays).
   */
  flushAfter(committed: Promise<unknown>): Promise<void>;
}

export function markedWrites(dir: string, sync: () => Promise<void>): MarkedWrites {
  let mark: string | undefined;
  let writes = 0;
  return {
    beforeWrite() {
      // Stryker disable next-line UpdateOperator: counting down changes the count as well
      writes++;
      mark ??= leaveMark(dir);
    },
    async flushAfter(committed) {
      const seen = writes;
      await committed;
      const own = mark;
      if (own === undefined) return;
      await sync();
      if (writes !== seen) return;
      mark = undefined;
      try {
        removeFlushedMarks(dir, own);
      } catch {
        // a mark left behind only makes a later boot start the cache anew
      }
    },
  };
}

/**
 * Leaves this process's mark in `dir`, flushed with its directory entry before any commit it
 * covers; returns its name. Throws when it cannot be written: nothing is then written to the
 * cache.
 */
export function leaveMark(dir: string, boot: Boot = currentBoot()): string {
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const temp = join(dir, `${MARKING_PREFIX}${suffix}`);
  const fd = openSync(temp, 'wx', 0o600);
  // Stryker disable BlockStatement: a descriptor left open (the finally's block emptied) shows in no test
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, boot } satisfies Mark));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // Stryker restore BlockStatement
  const name = `${MARK_PREFIX}${suffix}`;
  renameSync(temp, join(dir, name));
  flushDirectory(dir);
  return name;
}

/** Flushes a directory's entries (where the system allows it: not on Windows). */
// Stryker disable all: what a flush changes shows only after a power cut
function flushDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // a directory cannot be opened or flushed here
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
// Stryker restore all

/** The names in `dir` (none when it cannot be listed: no cache there yet). */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    // Stryker disable next-line ArrayDeclaration: a name that is no mark's is passed over either way
    return [];
  }
}

/** The marks in `dir`: name and what it holds (undefined when it cannot be read whole). */
function marksIn(dir: string): { name: string; mark: Mark | undefined }[] {
  return namesIn(dir)
    .filter((n) => n.startsWith(MARK_PREFIX))
    .map((name) => ({ name, mark: read(join(dir, name)) }));
}

function read(path: string): Mark | undefined {
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as Partial<Mark>;
    const ok =
      Number.isSafeInteger(m.pid) &&
      // Stryker disable next-line ConditionalExpression,OptionalChaining: a mark without a boot throws into the catch; one whose boot has no id is never this boot
      typeof m.boot?.id === 'string' &&
      Number.isFinite(m.boot.at);
    return ok ? (m as Mark) : undefined;
  } catch {
    return undefined; // (an emptied catch falls out of the function with undefined too)
  }
}

/**
 * The marks in `dir` of another boot, or that cannot be read (a machine that stopped while one
 * was being written): when there is one, the cache file may have lost pages its commits point at.
 */
export function staleMarks(dir: string, boot: Boot = currentBoot()): string[] {
  return marksIn(dir)
    .filter(({ mark }) => mark === undefined || !sameBoot(mark.boot, boot))
    .map(({ name }) => name);
}

/** Removes every mark in `dir`, and any left half made (the cache is started anew, or cleared). */
export function removeAllMarks(dir: string): void {
  for (const name of namesIn(dir))
    if (name.startsWith(MARK_PREFIX) || name.startsWith(MARKING_PREFIX))
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: without force only a mark another process removed first throws
      rmSync(join(dir, name), { force: true });
}

/**
 * After a flush of the file: removes `own` and the marks of this boot's processes that are
 * gone (the flush wrote their commits too). Marks of running processes stay.
 */
export function removeFlushedMarks(dir: string, own: string, boot: Boot = currentBoot()): void {
  for (const { name, mark } of marksIn(dir)) {
    const flushed =
      name === own || (mark !== undefined && sameBoot(mark.boot, boot) && !processAlive(mark.pid));
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: without force only a mark another process removed first throws
    if (flushed) rmSync(join(dir, name), { force: true });
  }
}
