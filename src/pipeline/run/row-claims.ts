import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, open, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EnrichError } from '../../errors.js';
import { processAlive } from '../../process-alive.js';
import { acquireLockDir, identityOf } from '../journal/run-lock.js';
import { ENDED_SUFFIX, endedRuns, markEnded, removeEndedClaims } from './ended-claims.js';

/**
 * One request per row at a time across the bulk runs of a state directory. Two runs of different
 * files at once (a dated export beside yesterday's still running, a cron job beside a run by
 * hand) would otherwise both send, and pay for, the rows the files share: neither finds the
 * other's answer in the results cache before it has sent its own.
 *
 * Each run that reads and fills the cache keeps a claims file in `runs/.row-claims/`: a line
 * naming its process, one naming its run (`=<run key>`), then `+<key>` for each row it is about
 * to send and `-<key>` once that row's answer is committed to the cache (or will never be: its
 * job failed). Rows of a job still running when the run ends stay claimed until it is
 * downloaded (by anyone) or expired, also past the run's end and its process's
 * (ended-claims.ts: a marker naming the run, whose kept batch keys are the claims). A key is the
 * cache's own key of the request (a hash of the service, account, kind, request options and the
 * normalised row), so runs only ever wait for runs that would fill the same cache entry.
 *
 * Claiming is checking every other live run's claims and appending one's own, as one step
 * under a lock (`.mutex`): of two runs about to send the same row, exactly one does. A run
 * takes that lock once per group of rows (a batch, or 1,024 rows read), not once per row: a
 * claim costs a hash already made for the cache lookup, a line appended, and the lock's few
 * file operations per group. A claims file whose process is gone is ignored and removed.
 *
 * A run that finds rows claimed leaves them out of its batches, sends what it has first (so it
 * never waits while holding claims it has not sent: two runs waiting for each other's unsent
 * rows would wait forever), then waits for those claims to end and takes the answers from the
 * cache. When the run holding them ended without their answers (its --timeout came first, or
 * it was killed), also before this run started, its jobs are settled first, as an earlier
 * run's are (earlier-runs.ts): their answers go to the cache. Rows still without an answer
 * are sent then.
 */

/** The directory of the row claims under a runs directory (hidden: no run of its own). */
export const ROW_CLAIMS_DIR = '.row-claims';

/** How often a waiting run looks at the claims it waits for again. */
export const SETTLE_POLL_MS = 100;

/** How long a run tries for the claims lock before it sends its rows unclaimed (a stuck holder). */
const MUTEX_PATIENCE_MS = 30_000;

export interface RowClaimsContext {
  runsDir: string;
  /** This run's key (its directory under `runsDir`): a run waiting for its rows may settle its jobs once it ends. */
  run?: string | undefined;
  now: () => number;
  signal?: AbortSignal | undefined;
  /** Told once when the claims cannot be kept (the runs directory not writable, a full disk). */
  onUnclaimed?: ((why: string) => void) | undefined;
  /** How long to try for the claims lock (default MUTEX_PATIENCE_MS; tests shorten it). */
  lockPatienceMs?: number;
}

/** Who holds a claim another run waits for: its process, and its run when it says. */
export interface Holder {
  pid: number;
  run?: string;
  /** A run that ended with the row's job not downloaded (not waited for: its jobs are settled). */
  ended?: boolean;
}

export interface RowClaims {
  /**
   * Claims `keys` for this run, as one step: returns those another live run holds now (not
   * claimed). `force`: claimed whoever else holds them (rows of a batch a resumed run must send
   * as journaled).
   */
  claim(keys: readonly string[], force?: boolean): Promise<Map<string, Holder>>;
  /** Gives back claims (their answers are committed to the cache, or will never be). */
  release(keys: readonly string[]): Promise<void>;
  /**
   * Waits while another live run holds any of `keys` and `answered` says no answer is in the
   * cache yet; returns those still held at `deadline` (or when the run is interrupted).
   */
  settle(
    keys: readonly string[],
    deadline: number,
    answered: (key: string) => boolean,
  ): Promise<Map<string, Holder>>;
  /**
   * Removes this run's claims file (at the run's end), once its rows of jobs not downloaded
   * are kept claimed past it (ended-claims.ts).
   */
  close(): Promise<void>;
}

/** Another run's claims file as read so far. */
interface Other {
  offset: number;
  rest: string;
  pid: number | undefined;
  identity: string | undefined;
  run?: string;
  keys: Set<string>;
}

/** The pid and identity of a claims file's first line (`<pid> <identity>`). */
function headerOf(line: string): { pid: number; identity: string | undefined } {
  const at = line.indexOf(' ');
  // Stryker disable next-line EqualityOperator: a line that starts with a space names no process either way (pid 0 or NaN)
  const pid = Number(at < 0 ? line : line.slice(0, at));
  // Stryker disable next-line EqualityOperator: (likewise)
  const identity = at < 0 ? '' : line.slice(at + 1);
  return { pid, identity: identity === '' ? undefined : identity };
}

/** Whether the process a claims file names still runs (the same process, when its identity is known). */
function alive(pid: number | undefined, identity: string | undefined): boolean {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a claims file's pid is read before it is judged, and process.kill refuses a pid that is no integer (processAlive: dead)
  if (pid === undefined || !Number.isSafeInteger(pid)) return false;
  // 0 and below name process groups, which process.kill would find.
  if (pid <= 0 || !processAlive(pid)) return false;
  return identity === undefined || identityOf(pid) === identity;
}

/** Reads what `path` gained since `o.offset` into `o` (complete lines only). */
async function readNew(path: string, o: Other): Promise<boolean> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    // Stryker disable next-line BooleanLiteral: a file that cannot be opened holds no claims either way (this forgets it)
    return false; // removed: its run ended
  }
  try {
    const { size } = await fh.stat();
    // Stryker disable next-line ConditionalExpression,EqualityOperator: reading nothing new reads nothing (this spares the read)
    if (size <= o.offset) return true;
    // Stryker disable next-line ArithmeticOperator: a larger buffer holds the same bytes read
    const buf = Buffer.alloc(size - o.offset);
    const { bytesRead } = await fh.read(buf, 0, buf.length, o.offset);
    o.offset += bytesRead;
    const lines = (o.rest + buf.toString('utf8', 0, bytesRead)).split('\n');
    o.rest = lines.pop() as string;
    for (const line of lines) {
      if (o.pid === undefined) {
        ({ pid: o.pid, identity: o.identity } = headerOf(line));
        continue;
      }
      const key = line.slice(1);
      if (line.startsWith('+')) o.keys.add(key);
      else if (line.startsWith('-')) o.keys.delete(key);
      else if (line.startsWith('=')) o.run = key;
    }
    return true;
  } finally {
    await fh.close();
  }
}

/** The claims of the other runs in `dir` (all but `own`, and `run`'s), as far as read. */
function otherRuns(c: RowClaimsContext, dir: string, own: string) {
  const others = new Map<string, Other>();
  const ended = endedRuns(c.runsDir, dir, c.run);
  return {
    /** Brings every other run's claims up to date; removes the files of runs gone. */
    async refresh(): Promise<void> {
      // Stryker disable next-line ArrowFunction: no directory lists no names either way
      const names = new Set(await readdir(dir).catch(() => [] as string[]));
      // Stryker disable next-line ConditionalExpression: a file forgotten is read again from its start, to the same claims
      for (const n of others.keys()) if (!names.has(n)) others.delete(n);
      for (const n of names) {
        if (n === own || !n.endsWith('.claims')) continue;
        let o = others.get(n);
        // Stryker disable next-line ConditionalExpression: (likewise: read again from its start)
        if (!o) {
          o = { offset: 0, rest: '', pid: undefined, identity: undefined, keys: new Set() };
          others.set(n, o);
        }
        if (!(await readNew(join(dir, n), o))) others.delete(n);
        else if (o.pid !== undefined && !alive(o.pid, o.identity)) {
          others.delete(n);
          // Killed: the rows of its jobs not downloaded stay claimed, by its run.
          if (o.run) {
            await markEnded(c.runsDir, dir, o.run, o.pid, c.now());
            names.add(`${o.run}${ENDED_SUFFIX}`);
          }
          // Stryker disable next-line ObjectLiteral,BooleanLiteral: the file was just read: there to remove
          await rm(join(dir, n), { force: true });
        }
      }
      await ended.refresh(names, c.now());
    },
    /** Drops the markers of ended runs whose claims ended (their jobs downloaded, by this run or another). */
    async refreshEnded(): Promise<void> {
      // Stryker disable next-line ArrowFunction: no directory lists no names either way
      const names = new Set(await readdir(dir).catch(() => [] as string[]));
      await ended.refresh(names, c.now()).catch(() => undefined);
    },
    /** The live run that holds `key`, if any; else the ended run that does. */
    holderOf(key: string): Holder | undefined {
      for (const o of others.values())
        if (o.keys.has(key)) return { pid: o.pid as number, ...(o.run ? { run: o.run } : {}) };
      const e = ended.holderOf(key);
      // One whose journal a live process holds (a resume, a run settling it) is waited for.
      return e && { pid: e.pid, run: e.run, ...(e.live ? {} : { ended: true }) };
    },
  };
}

/**
 * Runs `step` under the claims lock of `dir`; undefined (`unclaimed` told why) when the lock
 * cannot be had: the directory not writable, or held longer than MUTEX_PATIENCE_MS.
 */
async function underLock<T>(
  dir: string,
  c: RowClaimsContext,
  unclaimed: (err: unknown) => void,
  step: () => Promise<T>,
): Promise<T | undefined> {
  const giveUp = c.now() + (c.lockPatienceMs ?? MUTEX_PATIENCE_MS);
  // Stryker disable next-line MethodExpression,ArithmeticOperator: how soon the lock is tried again, not whether
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    let release: () => Promise<void>;
    try {
      // Stryker disable next-line StringLiteral: the name a lock file gives its holder, read by no test
      release = await acquireLockDir(join(dir, '.mutex'), 'enrich (row claims)');
    } catch (err) {
      // Stryker disable next-line LogicalOperator,ConditionalExpression: acquireLockDir's only error of its own is RUN_IN_PROGRESS
      const held = err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS';
      if (!held) return void unclaimed(err);
      // Stryker disable next-line EqualityOperator: the patience's last millisecond
      if (c.signal?.aborted || c.now() >= giveUp)
        return void unclaimed(new Error('the row claims lock stayed held'));
      await delay(wait);
      continue;
    }
    try {
      return await step();
    } finally {
      await release().catch(() => undefined);
    }
  }
}

/** This run's claims file: made with its first lines (process, run) at the first append. */
function ownFile(dir: string, path: string, run: string | undefined) {
  let made = false;
  return {
    async append(sign: '+' | '-', keys: readonly string[]): Promise<void> {
      if (keys.length === 0) return;
      const text = keys.map((k) => `${sign}${k}\n`).join('');
      if (made) return appendFile(path, text);
      const runLine = run ? `=${run}\n` : '';
      // Stryker disable next-line StringLiteral: /proc tells every process's identity on Linux, where the tests run
      const head = `${process.pid} ${identityOf(process.pid) ?? ''}\n${runLine}`;
      // First made by a claim, under the claims lock: the lock's own directory in `dir` keeps a
      // run's close from removing `dir` meanwhile (it removes it only once empty).
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // Stryker disable next-line StringLiteral: the name is this process's and random: never there before
      await writeFile(path, head + text, { mode: 0o600, flag: 'wx' });
      made = true;
    },
    async remove(): Promise<void> {
      // Stryker disable next-line ConditionalExpression: removing a file never made removes nothing (an empty directory at most, as the last run's close does)
      if (!made) return;
      // Stryker disable next-line BooleanLiteral: a second removal removes nothing
      made = false;
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the file was made: there to remove
      await rm(path, { force: true });
      // The directory goes with the last run's file (a run writing its first claim makes it again).
      await rmdir(dir).catch(() => undefined);
    },
  };
}

/** Opens this run's row claims (nothing is written before its first claim). */
export function rowClaims(c: RowClaimsContext): RowClaims {
  const dir = join(c.runsDir, ROW_CLAIMS_DIR);
  const name = `${process.pid}-${randomBytes(6).toString('hex')}.claims`;
  const path = join(dir, name);
  const others = otherRuns(c, dir, name);
  const mine = new Set<string>();
  let broken = false;

  const unclaimed = (err: unknown) => {
    // Stryker disable next-line ConditionalExpression: once broken, claim and release return before anything can fail again
    if (!broken) c.onUnclaimed?.((err as Error).message);
    broken = true;
  };

  const file = ownFile(dir, path, c.run);
  const append = file.append;

  return {
    async claim(keys, force = false) {
      const held = new Map<string, Holder>();
      // Stryker disable next-line ConditionalExpression,LogicalOperator: past this, a broken claims fails again and is not told twice; no keys claim nothing
      if (broken || keys.length === 0) return held;
      try {
        await underLock(dir, c, unclaimed, async () => {
          await others.refresh();
          const take: string[] = [];
          for (const k of keys) {
            const h = force || mine.has(k) ? undefined : others.holderOf(k);
            if (h) {
              held.set(k, h);
              continue;
            }
            // Stryker disable next-line ConditionalExpression: a claim written twice is one claim
            if (!mine.has(k)) take.push(k);
          }
          await append('+', take);
          for (const k of take) mine.add(k);
        });
      } catch (err) {
        // Not kept: the rows are sent unclaimed (as by an earlier build), said once.
        unclaimed(err);
        held.clear();
      }
      return held;
    },

    async release(keys) {
      const gone = keys.filter((k) => mine.delete(k));
      // Stryker disable next-line ConditionalExpression,LogicalOperator: a broken claims has no file to append to (it fails, untold); no keys append nothing
      if (broken || gone.length === 0) return;
      await append('-', gone).catch(unclaimed);
    },

    async settle(keys, deadline, answered) {
      for (;;) {
        await others.refresh();
        const held = new Map<string, Holder>();
        for (const k of keys) {
          const h = others.holderOf(k);
          // An ended holder is not waited for: its jobs are settled (settleRuns).
          if (h && !h.ended && !answered(k)) held.set(k, h);
        }
        // Stryker disable next-line EqualityOperator: the deadline's last millisecond
        if (held.size === 0 || c.signal?.aborted || c.now() + SETTLE_POLL_MS >= deadline)
          return held;
        // Stryker disable next-line ObjectLiteral: an interrupt ends the wait at the next look, 100 ms on at most
        await delay(SETTLE_POLL_MS, undefined, { signal: c.signal }).catch(() => undefined);
      }
    },

    async close() {
      mine.clear();
      if (c.run) await markEnded(c.runsDir, dir, c.run, process.pid, c.now());
      await others.refreshEnded();
      await file.remove();
    },
  };
}

/**
 * Removes the claims files of runs whose process is gone (left by killed runs: a claim is a
 * hash of a row's request, contact data too) and the lock of one, then the directory once
 * empty. Those of runs going on now stay. A killed run's rows of jobs not downloaded stay
 * claimed by its run's marker (ended-claims.ts: no key in it; its run's kept batch keys go
 * with the run's retention), and the markers of runs left nothing to download go.
 */
export async function removeFreeRowClaims(runsDir: string, now = Date.now()): Promise<void> {
  const dir = join(runsDir, ROW_CLAIMS_DIR);
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    if (!n.endsWith('.claims')) continue;
    // Its first lines only: a live million-row run's file holds tens of MB of claims.
    const lines = await firstLines(join(dir, n));
    const head = lines[0];
    // No first line yet: a run writing it now (a file a run killed then left holds no key).
    if (head === undefined) continue;
    const { pid, identity } = headerOf(head);
    if (alive(pid, identity)) continue;
    const run = lines[1]?.startsWith('=') ? lines[1].slice(1) : undefined;
    if (run) await markEnded(runsDir, dir, run, pid, now);
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: its first line was just read: there to remove
    await rm(join(dir, n), { force: true });
  }
  // The lock of a run killed while it held it (a run holding it now keeps it).
  // Stryker disable next-line StringLiteral: the name a lock file gives its holder, read by no test
  const release = await acquireLockDir(join(dir, '.mutex'), 'enrich cache clear').catch(
    () => undefined,
  );
  await release?.();
  await removeEndedClaims(runsDir, dir, await readdir(dir).catch(() => []), now);
  await rmdir(dir).catch(() => undefined);
}

/** The whole first lines of a claims file, two at most (none: gone, or no whole line yet). */
async function firstLines(path: string): Promise<string[]> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    return [];
  }
  // Stryker disable next-line ArrowFunction: a read-only handle left to the garbage collector is not observable
  const close = () => fh.close();
  const buf = Buffer.alloc(512);
  const { bytesRead } = await fh.read(buf, 0, buf.length, 0).finally(close);
  const text = buf.toString('utf8', 0, bytesRead);
  return text.split('\n').slice(0, -1).slice(0, 2);
}
