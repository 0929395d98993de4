import { accessSync, constants, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { EnrichError } from '../errors.js';
import { createKeyMemo, scopeString } from './cache-keys.js';
import { secureCacheFiles } from './cache-modes.js';
import { watchSpace, type SpaceOptions, type SpaceWatch } from './free-space.js';
import { ALL_CACHE_FILES, CACHE_FILE, checkMetaPages, removeLegacyFiles } from './lmdb-file.js';
import { RECORD_SHAPES } from './record-shapes.js';
import { markedWrites, removeAllMarks, staleMarks } from './unsynced.js';

/**
 * The results cache across runs and files: one lmdb environment in the OS cache directory.
 * lmdb is a memory-mapped B-tree that several processes may read and write at once (two
 * runs in cron fill it safely); its binaries ship as npm packages, so it installs with no
 * compiler. Keys are SHA-256 hashes of (scope, request): no contact data in the keys, and a
 * key never exceeds lmdb's key size however long the request's fields are. Format 2 (its own
 * file, see lmdb-file.ts): about 650-700 bytes a contact answer, under half of format 1.
 */

/** One cached answer: the records the service gave, when, and whether it charged for them. */
export interface CachedAnswer {
  records: Record<string, unknown>[];
  /** When the service answered (epoch ms). */
  at: number;
  charged: boolean;
  /**
   * Not an answer but a mark: a run sent this request and its answer never came (the service
   * may have charged it). Its `records` are empty and `at` is when it was sent. Runs do not send
   * such a request again by themselves, as a run does not resend its own unconfirmed batch.
   */
  unconfirmed?: boolean;
  /**
   * A mark over this answer: a run sent the request again (the answer was too old for it) at
   * this time, and its answer never came. A run reads the answer while it is fresh for it, and
   * the mark after that (cache-use.ts `asRead`).
   */
  unansweredAt?: number;
}

/**
 * What makes answers comparable: the same service, the same account and the same
 * request options. The account is a hash of the API key, never the key: one account's
 * paid data is never served to a run with another key.
 */
export interface CacheScope {
  baseUrl: string;
  account: string;
  kind: string;
  metadata: Readonly<Record<string, unknown>>;
}

/** The cache seen by one kind of request of one account: request key -> answer. */
export interface ScopedCache {
  get(requestKey: string): CachedAnswer | undefined;
  put(requestKey: string, answer: CachedAnswer): void;
  settled(): Promise<void>;
  committed(): Promise<void>;
  claimKey(requestKey: string): string;
  markStored(storeKey: string, at: number): void;
}

/** The opened cache. Every method degrades (warns once, then does nothing) instead of failing. */
export interface ResultsCacheStore {
  readonly dir: string;
  /** Mode repairs made when it was opened (cache-modes.ts): a line each, for a warning. */
  readonly repairs: readonly string[];
  scoped(scope: CacheScope): ScopedCache;
  /** Resolves once every put is on disk. */
  flushed(): Promise<void>;
  /** Flushes (as `flushed`), then closes. */
  close(): Promise<void>;
  /** Entries by whether they are older than `cutoff` (epoch ms). */
  stats(): CacheStats;
  /** Removes entries looked up before `cutoff` (epoch ms); returns how many. */
  prune(cutoff: number): Promise<number>;
}

export interface CacheStats {
  entries: number;
  charged: number;
  oldest: number | null;
  newest: number | null;
}

/** Puts that may wait to be written before a run waits for them (about two batches). */
const MAX_PENDING_PUTS = 2_000;

export { CACHE_FILE } from './lmdb-file.js';
export { accountFingerprint } from './cache-keys.js';

/** Stored form: short names keep each entry small. */
interface Stored {
  r: Record<string, unknown>[];
  t: number;
  c: boolean;
  /**
   * A mark of a request sent without an answer: when it was sent. Alone (CachedAnswer's
   * `unconfirmed`) its `t` is 0, so that earlier builds, which know no such mark, read it as an
   * answer too old to serve (and send the row, as they did), never as a no-match. Over an older
   * answer (`unansweredAt`) that answer is kept: earlier builds read it as they always did.
   */
  u?: number;
}

/** A mark alone (CachedAnswer's `unconfirmed`). */
// Stryker disable next-line ArrayDeclaration: a mark alone is read without its records (`t` 0)
const markAlone = (at: number): Stored => ({ r: [], t: 0, c: false, u: at });

/** An answer, or a mark (alone or over an answer), as it is stored. */
function storedOf(a: CachedAnswer): Stored {
  if (a.unconfirmed) return markAlone(a.at);
  const answer = { r: a.records, t: a.at, c: a.charged };
  // Stryker disable next-line ConditionalExpression: a `u` of undefined is read as none
  return a.unansweredAt === undefined ? answer : { ...answer, u: a.unansweredAt };
}

/** When an entry was written (a mark's `t` is 0). */
const timeOf = (v: Stored): number => v.u ?? v.t;

/**
 * The address space mapped for the file up front (virtual: pages count in memory only once
 * read). lmdb-js grows a smaller map by mapping the file again and keeps every earlier map
 * until it closes, so a cache grown during a run was resident about twice (3 GB for a 1.4 GB
 * file at 1M rows). A cache larger than this still grows, as before.
 */
const MAP_SIZE = 2 ** 36;

/** Where lmdb keeps the table of shared structures, outside the answers' keys. */
// Stryker disable next-line StringLiteral: a module constant (read once per test worker); the test of earlier builds' answers fails with any other key
const STRUCTURES_KEY = Symbol.for('enrich-structures');

/**
 * How the database is opened.
 * - Field names: lmdb's table of shared structures holds the shapes of the service's records
 *   (record-shapes.ts), written once when the file is new and never changed after; every other
 *   shape is defined inside its answer (`shouldShareStructure` says no to every new one).
 *   Earlier builds let every writer add to that table, which two processes filling the cache
 *   at once could confuse: an answer was read back with a field name of another answer's
 *   shape (RELIABILITY.md). A table those builds wrote is kept as it is (their answers are
 *   read with it, and its shapes reused); earlier builds read these answers too.
 * - Commits are not flushed one by one (`noSync`): the file is flushed once, when the cache is
 *   closed. A flush per commit (one per job of a bulk run) wrote each commit's scattered
 *   B-tree pages out at once: 14% of a cold run's CPU at 1M rows (BENCHMARKS.md, session 15).
 *   A machine that stops before that flush may leave the file damaged: unsynced.ts marks a
 *   cache with unflushed commits, and a cache marked so in an earlier boot is started anew.
 * - Compression only for answers over 1,000 bytes (a company's many matches): LZ4 with its
 *   dictionary costs more CPU than it saves on a contact's few hundred bytes.
 * - The file and its `-lock` are created 0600 (lmdb's default is 0664 less the umask): the
 *   answers are contact data, private as the journals are (cache-modes.ts repairs older files).
 */
const OPEN_OPTIONS = {
  compression: true,
  permissionsMode: 0o600,
  noSync: true,
  mapSize: MAP_SIZE,
  sharedStructuresKey: STRUCTURES_KEY,
  // Stryker disable next-line ArrowFunction: an answer of undefined is a no too
  shouldShareStructure: () => false,
} as const;

/**
 * Opens (creating) the cache in `dir`. A cache that cannot be opened (read-only, disk full,
 * corrupt) is undefined, with `onWarning` told why: the run then goes on without one. On a
 * disk with little room left (free-space.ts) it is read but takes no more answers.
 */
export function openResultsCache(
  dir: string,
  onWarning: (message: string) => void = () => undefined,
  space: SpaceOptions & {
    /** Told why the cache cannot be opened, instead of a run's warning (the cache commands). */
    onUnusable?: (err: unknown) => void;
  } = {},
): ResultsCacheStore | undefined {
  let db: RootDatabase<Stored, string>;
  let repairs: string[];
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    removeLegacyFiles(dir);
    repairs = secureCacheFiles(dir);
    const stale = staleMarks(dir);
    if (stale.length > 0) startAnew(dir, stale, onWarning);
    checkMetaPages(join(dir, CACHE_FILE));
    db = open<Stored, string>({ path: join(dir, CACHE_FILE), ...OPEN_OPTIONS });
    // Stryker disable next-line StringLiteral: any key makes lmdb read the file; the probe's is never stored
    db.get('\0probe'); // a corrupt file fails here, not mid-run
  } catch (err) {
    if (space.onUnusable) space.onUnusable(err);
    else onWarning(unusable(dir, err));
    return undefined;
  }
  // Little room left on the disk: answers are read, none written (lmdb must not meet a full disk).
  return { ...wrap(db, dir, onWarning, watchSpace(dir, space, onWarning)), repairs };
}

/**
 * Removes a cache the machine stopped writing (unsynced.ts): its file may lack pages its last
 * commits point at. Its answers are looked up again when asked for.
 */
function startAnew(dir: string, marks: string[], onWarning: (message: string) => void): void {
  for (const f of [CACHE_FILE, `${CACHE_FILE}-lock`, ...marks])
    rmSync(join(dir, f), { force: true });
  onWarning(
    `the results cache in ${dir} was being written when the machine stopped, and may be damaged: starting a new one (its answers are looked up again when asked for)`,
  );
}

/** `f`, called the first time only. */
function once(f: () => void): () => void {
  let done = false;
  return () => {
    // Stryker disable next-line ConditionalExpression,BooleanLiteral: seeding again finds the table there and changes nothing; only its cost (a transaction per answer) would tell
    if (done) return;
    done = true;
    f();
  };
}

/**
 * Writes the records' shapes as the table of shared structures of a file that has none, in one
 * transaction, before the first answer is put: of two processes filling a new file at once,
 * one writes it, and the other finds it. A table already there (this file's, or an earlier
 * build's) is left as it is. Should the write fail, answers define their own structures, as
 * they do for any shape not in the table.
 */
function seedShapes(db: RootDatabase<Stored, string>): void {
  const raw = db as unknown as RootDatabase<unknown, symbol> & {
    encoder: { structures: { uninitialized?: boolean } };
  };
  try {
    raw.transactionSync(() => {
      if (raw.getBinary(STRUCTURES_KEY) === undefined) raw.putSync(STRUCTURES_KEY, RECORD_SHAPES);
    });
  } catch {
    // left without a table
  }
  // Writing the table made msgpackr read the (then empty) table: it reads it again at the next
  // answer. (msgpackr 1.12's flag; the test of the shapes fails should it change.)
  raw.encoder.structures.uninitialized = true;
}

function unusable(dir: string, err: unknown): string {
  const { why, hint } = describeUnusable(dir, err);
  return `the results cache in ${dir} cannot be used (${why}); going on without it: every row is sent (${hint})`;
}

/** The errno of a failure, or of lmdb's message (it throws plain Errors). */
function errnoOf(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  // fs.rm names a directory where it expected a file with a code of its own.
  if (typeof code === 'string') return code === 'ERR_FS_EISDIR' ? 'EISDIR' : code;
  const text = err instanceof Error ? err.message : String(err);
  if (/permission denied/i.test(text)) return 'EACCES';
  if (/not a directory/i.test(text)) return 'ENOTDIR';
  if (/is a directory/i.test(text)) return 'EISDIR';
  return undefined;
}

/**
 * Why a cache cannot be used, and what fixes it: a path that is not a directory, or one the
 * user may not write, is not fixed by `enrich cache clear` (which would crash on the first,
 * and run as the owner erase another user's cache); a damaged file is.
 */
export function describeUnusable(dir: string, err: unknown): { why: string; hint: string } {
  const why = err instanceof Error ? err.message : String(err);
  const errno = errnoOf(err);
  if (errno === 'EEXIST' || errno === 'ENOTDIR')
    return {
      why: `${dir} is not a directory`,
      hint: `set ENRICH_CACHE_DIR to a directory, or move what is at ${dir}`,
    };
  // A directory where the cache's file goes: not enrich's to remove (`cache clear` leaves it).
  if (errno === 'EISDIR')
    return {
      why: `${join(dir, CACHE_FILE)} is a directory, not the cache's file`,
      hint: `move or remove ${join(dir, CACHE_FILE)} (enrich makes the file there), or set ENRICH_CACHE_DIR to another directory`,
    };
  if (errno === 'EACCES' || errno === 'EPERM' || errno === 'EROFS')
    return {
      why,
      hint: `run as the user the directory belongs to, or set ENRICH_CACHE_DIR to a directory of your own`,
    };
  return { why, hint: 'enrich cache clear starts a new one' };
}

/**
 * For the cache commands: a FILE_SYSTEM error (exit 2) when the cache directory is not a
 * directory or may not be written, before anything is opened or removed; undefined when it
 * is one, or is not there yet (it is made when first used).
 */
export function cacheDirError(dir: string): EnrichError | undefined {
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return cacheError(dir, 'cannot be used', err);
  }
}

/** A cache command's FILE_SYSTEM error (exit 2): what, why, and the fix (describeUnusable). */
export function cacheError(dir: string, what: string, err: unknown): EnrichError {
  const { why, hint } = describeUnusable(dir, err);
  const errno = errnoOf(err);
  return new EnrichError('FILE_SYSTEM', `the results cache in ${dir} ${what} (${why || errno})`, {
    cause: err,
    location: { file: dir },
    // A sentence; a command (enrich …) keeps its case.
    hint: `${hint.startsWith('enrich ') ? hint : hint.charAt(0).toUpperCase() + hint.slice(1)}.`,
    ...(errno ? { details: { errno } } : {}),
  });
}

/** Flushes the file (every process's commits in it) to the disk. */
// Stryker disable all: what a flush changes shows only after a power cut (unsynced.test.ts holds when it is asked for)
function syncFile(db: RootDatabase<Stored, string>): Promise<void> {
  const env = db as unknown as { sync(done: (err?: unknown) => void): void };
  return new Promise((ok, no) => env.sync((err) => (err ? no(err) : ok())));
}
// Stryker restore all

/**
 * Once it fails, the cache is off for the rest of the process: `report` is told once (a
 * warning, never a failed run), and `guard` gives every later call its fallback.
 */
function latch(report: (err: unknown) => void) {
  let broken = false;
  // Stryker disable next-line ArrowFunction: replaced at once by the promise's executor below
  let onBroken: () => void = () => undefined;
  const whenBroken = new Promise<void>((ok) => (onBroken = ok));
  const fail = (err: unknown) => {
    if (!broken) report(err);
    broken = true;
    onBroken();
  };
  const guard = <T>(fallback: T, f: () => T): T => {
    if (broken) return fallback;
    try {
      return f();
    } catch (err) {
      fail(err);
      return fallback;
    }
  };
  return { fail, guard, whenBroken, isBroken: () => broken };
}

/** The puts of one lmdb commit (they share its promise). */
interface CommitBatch {
  written: Promise<unknown> | undefined;
  puts: number;
}

/**
 * Entries written into lmdb's commits (`before` says whether one may be written now), each
 * counted until its commit settles; a commit that fails is `fail`ed.
 */
function writeQueue(
  db: RootDatabase<Stored, string>,
  fail: (err: unknown) => void,
  before: () => boolean,
) {
  let pending = 0;
  let last: Promise<void> = Promise.resolve();
  // Stryker disable next-line ObjectLiteral: the first put starts a batch of its own whatever this holds (its promise is never undefined)
  let batch: CommitBatch = { written: undefined, puts: 0 };
  return {
    write(key: string, value: Stored): void {
      if (!before()) return;
      const written = db.put(key, value);
      pending++;
      // lmdb gives every put of one commit the same promise: one handler per commit.
      if (written !== batch.written) {
        const b = { written, puts: 0 };
        batch = b;
        last = written.then(
          () => void (pending -= b.puts),
          (err: unknown) => {
            // Stryker disable next-line AssignmentOperator: the cache is off after this: no more puts, and settled() returns the settled `last` either way
            pending -= b.puts;
            onCommitFailure(err, fail);
          },
        );
      }
      batch.puts++;
    },
    /** Waits for the writes queued so far once more than a batch or two of them pile up. */
    settled: (): Promise<void> => (pending > MAX_PENDING_PUTS ? last : Promise.resolve()),
    /** The commit of the writes so far. */
    committed: (): Promise<void> => last,
  };
}

function wrap(
  db: RootDatabase<Stored, string>,
  dir: string,
  onWarning: (message: string) => void,
  room: SpaceWatch,
): Omit<ResultsCacheStore, 'repairs'> {
  const { fail, guard, whenBroken, isBroken } = latch((err) => onWarning(unusable(dir, err)));
  // This process's writes since its last flush (unsynced.ts: marked before the first).
  // Stryker disable next-line ArrowFunction: what a flush changes shows only after a power cut
  const marks = markedWrites(dir, () => syncFile(db));
  const seedOnce = once(() => seedShapes(db));
  const queue = writeQueue(db, fail, () => {
    if (!room.toPut()) return false;
    marks.beforeWrite();
    seedOnce();
    return true;
  });
  const write = queue.write;
  // After a failed commit lmdb's `flushed` never settles: a failure ends the wait too.
  const flushed = () =>
    guard(Promise.resolve(), () =>
      Promise.race([marks.flushAfter(db.flushed).then(undefined, fail), whenBroken]),
    );
  return {
    dir,
    scoped(scope) {
      const keys = createKeyMemo(scopeString(scope));
      return {
        get: (requestKey) =>
          guard(undefined, () => {
            // A request looked up again (a row claimed after it missed) is not hashed again.
            const key = keys.known(requestKey);
            const v = db.get(key);
            if (v?.u !== undefined && v.t === 0)
              return { records: [], at: v.u, charged: false, unconfirmed: true };
            if (v?.u !== undefined)
              return { records: v.r, at: v.t, charged: v.c, unansweredAt: v.u };
            if (v) return { records: v.r, at: v.t, charged: v.c };
            keys.missed(requestKey, key); // its answer is likely put soon: hashed once
            return undefined;
          }),
        put: (requestKey, a) => guard(undefined, () => write(keys.taken(requestKey), storedOf(a))),
        // A mark by the entry's own key (a claim key): where there is no entry yet, an earlier
        // mark, or an answer older than the request (as cache-use.ts `marked`).
        markStored: (storeKey, at) =>
          guard(undefined, () => {
            const v = db.get(storeKey);
            if (v === undefined) return write(storeKey, markAlone(at));
            // An answer as new as the request stays unmarked.
            if (v.t >= at) return;
            // Stryker disable next-line EqualityOperator: a mark of the same time written again is the same mark
            if ((v.u ?? -Infinity) < at) write(storeKey, { ...v, u: at });
          }),
        // Waits for the writes queued so far once more than a batch or two of them pile up.
        settled: queue.settled,
        // The commit of the puts so far (not flushed to the disk: other processes read it).
        committed: queue.committed,
        // The request's key in the store: unique to the scope, so it names the request for the
        // claims of runs that would fill the same entry (row-claims.ts).
        claimKey: (requestKey) => keys.known(requestKey),
      };
    },
    flushed,
    close: async () => {
      await flushed();
      const closing = db.close().catch(() => undefined);
      // After a failed commit lmdb's close waits for that same flush: not waited for then.
      if (!isBroken()) await closing;
    },
    stats: () => guard({ entries: 0, charged: 0, oldest: null, newest: null }, () => statsOf(db)),
    prune: (cutoff) =>
      Promise.resolve(
        guard(0, () => {
          // Removing entries writes pages too (and never shrinks the file: enrich cache clear does).
          if (!room.toWrite()) return 0;
          marks.beforeWrite();
          return pruneOlder(db, cutoff);
        }),
      ),
  };
}

/**
 * Reports why a commit failed: lmdb rejects its puts with "Commit failed" and the cause (a full
 * disk) in `commitError`, a promise rejected too, which, unhandled, ended the run.
 */
function onCommitFailure(err: unknown, report: (cause: unknown) => void): void {
  const cause = (err as { commitError?: Promise<never> }).commitError;
  if (cause) cause.catch(report);
  else report(err);
}

function statsOf(db: RootDatabase<Stored, string>): CacheStats {
  const s: CacheStats = { entries: 0, charged: 0, oldest: null, newest: null };
  for (const { value } of db.getRange()) {
    s.entries++;
    if (value.c) s.charged++;
    const t = timeOf(value);
    s.oldest = s.oldest === null ? t : Math.min(s.oldest, t);
    // Stryker disable next-line ConditionalExpression: Math.max(null, t) is t for any time after 1970
    s.newest = s.newest === null ? t : Math.max(s.newest, t);
  }
  return s;
}

/** Old entries removed per transaction (their keys are held until then). */
const PRUNE_CHUNK = 10_000;

/**
 * Removes the entries older than `cutoff`; returns how many. Synchronous transactions: one that
 * cannot be written (a full disk) throws here, where lmdb's asynchronous removes also left a
 * rejected promise of its own that nothing could handle (the process ended).
 */
function pruneOlder(db: RootDatabase<Stored, string>, cutoff: number): number {
  let removed = 0;
  let old: string[] = [];
  const removeOld = () => {
    db.transactionSync(() => {
      for (const key of old) db.removeSync(key);
    });
    removed += old.length;
    old = [];
  };
  for (const { key, value } of db.getRange()) {
    if (timeOf(value) < cutoff) old.push(key);
    // Stryker disable next-line ConditionalExpression,EqualityOperator: when a chunk is removed changes the transactions (and memory), not which entries go
    if (old.length === PRUNE_CHUNK) removeOld();
  }
  removeOld();
  return removed;
}

/** Removes the cache's files: no contact data is left in `dir`. */
export async function clearCache(dir: string): Promise<void> {
  const { rm } = await import('node:fs/promises');
  for (const f of ALL_CACHE_FILES) await rm(join(dir, f), { force: true });
  removeAllMarks(dir);
}
