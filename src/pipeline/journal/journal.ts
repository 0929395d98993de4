import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { fileSystemError } from '../../io/output-target.js';
import type { InputIdentity } from '../../io/read.js';
import { syncDirsDown } from '../../io/sync-dir.js';
import { acquireRunLock } from './run-lock.js';
import {
  applyVerifyEvent,
  isVerifyEvent,
  type VerifyEvent,
  type VerifyState,
} from './verify-events.js';

/**
 * The run journal: an append-only JSON Lines file, one event per line, so a crash
 * (even SIGKILL) can at worst lose a torn last line, never an earlier event. Every
 * event that guards money (a batch about to be POSTed, a job accepted) is flushed
 * to disk before the request it guards is sent. The key is never written here.
 */

export type JournalEvent =
  | {
      t: 'run';
      v: 1;
      run: string;
      nonce: string;
      kind: string;
      input: InputIdentity;
      options: Record<string, unknown>;
      command: string;
      at: number;
    }
  | {
      t: 'submit';
      batch: string;
      first: number;
      last: number;
      count: number;
      idem: string;
      at: number;
    }
  | { t: 'accepted'; batch: string; job: string; url: string; expires: number | null; at: number }
  | {
      t: 'spooled';
      batch: string;
      records: number;
      credits: number;
      remaining: number | null;
      creditError: boolean;
      /**
       * Not dry, and yet a record not charged and without data, read with a balance not seen
       * to hold while the job ran (downloaded after a top-up, or by another process): its rows
       * may have been skipped for credits. Absent in journals of earlier builds: not known.
       */
      unsure?: boolean;
      at: number;
    }
  | { t: 'failed'; batch: string; code: string; message: string; at: number }
  | { t: 'unconfirmed'; batch: string; message: string; at: number }
  | { t: 'expired'; batch: string; at: number }
  | { t: 'split'; batch: string; size: number; at: number }
  /** Rows up to `upTo` are classified; those in `ranges` (inclusive) came from the results cache. */
  | { t: 'hits'; upTo: number; ranges: [number, number][]; at: number }
  /**
   * Batch `batch` sends the rows `rows` (ascending) again: an earlier attempt took them from
   * the results cache, and their answers are gone since (refill.ts). Journaled before the
   * batch's `submit`: a resume rebuilds it from this list, as the cache changes between resumes.
   */
  | { t: 'refill'; batch: string; rows: number[]; at: number }
  /**
   * The output was written; `exit` is the run's exit code (0: every row settled, nothing a
   * resume would send). Absent in journals of earlier builds: not known.
   */
  | { t: 'done'; at: number; output: string; exit?: number }
  /**
   * A key of another account hash took the run over (adopt-run.ts): the service showed that
   * key one of the run's jobs, so both keys read the same account's jobs.
   */
  | { t: 'adopted'; account: string; at: number }
  | VerifyEvent;

type Omit2<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;
export type NewEvent = Omit2<JournalEvent, 'at'>;

/** What the journal knows of one batch, folded from its events. */
export interface BatchState {
  id: string;
  first: number;
  last: number;
  count: number;
  idem: string;
  /** When its POST was (last) journaled: the time a mark of it as sent without an answer gives. */
  sentAt?: number;
  job?: string;
  url?: string;
  expires?: number | null;
  spooled?: {
    records: number;
    credits: number;
    remaining: number | null;
    creditError: boolean;
    /** See the `spooled` event; undefined in journals of earlier builds. */
    unsure?: boolean;
  };
  failed?: { code: string; message: string };
  /** Its POST may have reached the service, which never confirmed it (and may have charged it). */
  unconfirmed?: { message: string };
  expired?: boolean;
  splitSize?: number;
}

/** The folded state of a run. */
export interface RunState {
  header: Extract<JournalEvent, { t: 'run' }>;
  batches: Map<string, BatchState>;
  done?: { at: number; output: string; exit?: number };
  /** The rows an earlier attempt of the run took from the results cache (a resumed run takes them again). */
  hits?: { upTo: number; ranges: [number, number][] };
  /** The refill batches, in the order they were journaled (see the `refill` event). */
  refills?: { batch: string; rows: number[] }[];
  /** `verify-emails`: what became of each address (verify-events.ts). */
  verify?: Map<string, VerifyState>;
  /** The account hashes (journalAccount) of the keys that took the run over since it began. */
  adopted?: string[];
}

/**
 * How a run's journal names the account it was sent with: a hash of the client's `account`
 * (itself a hash of the API key; the key is never written here). Part of the run's options,
 * so another account's run of the same file is another run (never served this one's answers).
 */
export function journalAccount(account: string): string {
  return createHash('sha256')
    .update(`enrich-journal-account\0${account}`)
    .digest('hex')
    .slice(0, 32);
}

/** The identity of a run: input identity plus the options that change requests. */
export function runKey(
  kind: string,
  input: InputIdentity,
  options: Record<string, unknown>,
): string {
  const canonical = JSON.stringify({ kind, input, options: sortKeys(options) });
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );
}

/** The options as a string (keys sorted) without `field`: runs that differ in that one alone. */
export function optionsWithout(options: Record<string, unknown>, field: string): string {
  const { [field]: _dropped, ...rest } = options;
  return JSON.stringify(sortKeys(rest));
}

/**
 * True when two runs read the same content the same way: one file (path, size, SHA-256), the
 * same sheet of a workbook and the same encoding. Stdin is never the same content twice.
 */
export function sameInput(a: InputIdentity, b: InputIdentity): boolean {
  return (
    a.path === b.path &&
    a.size === b.size &&
    a.sha256 === b.sha256 &&
    a.sheet === b.sheet &&
    a.encoding === b.encoding &&
    a.path !== '-'
  );
}

/** Applies one event to the run state (the single folding rule for replay and live appends). */
export function applyEvent(state: RunState, e: JournalEvent): void {
  // Stryker disable next-line ConditionalExpression,StringLiteral: a run event names no batch, so it falls through to the same no-op
  if (e.t === 'run') return;
  if (isVerifyEvent(e)) return applyVerifyEvent((state.verify ??= new Map()), e);
  if (e.t === 'done') {
    state.done = { at: e.at, output: e.output, ...(e.exit !== undefined ? { exit: e.exit } : {}) };
    return;
  }
  if (e.t === 'adopted') {
    (state.adopted ??= []).push(e.account);
    return;
  }
  if (e.t === 'hits') {
    const hits = (state.hits ??= { upTo: -1, ranges: [] });
    // Ranges arrive in row order; a resumed attempt journals only rows past `upTo`.
    for (const r of e.ranges) if (r[0] > hits.upTo) hits.ranges.push(r);
    hits.upTo = Math.max(hits.upTo, e.upTo);
    return;
  }
  if (e.t === 'refill') {
    (state.refills ??= []).push({ batch: e.batch, rows: e.rows });
    return;
  }
  if (e.t === 'submit') {
    const prev = state.batches.get(e.batch);
    state.batches.set(e.batch, {
      ...prev,
      id: e.batch,
      first: e.first,
      last: e.last,
      count: e.count,
      idem: e.idem,
      sentAt: e.at,
      // Sent again after a failure that proved nothing was processed: from here on it may be.
      failed: undefined,
    });
    return;
  }
  const b = state.batches.get(e.batch);
  if (!b) return;
  if (e.t === 'accepted')
    Object.assign(b, {
      job: e.job,
      url: e.url,
      expires: e.expires,
      failed: undefined,
      unconfirmed: undefined,
    });
  else if (e.t === 'spooled')
    b.spooled = {
      records: e.records,
      credits: e.credits,
      remaining: e.remaining,
      creditError: e.creditError,
      ...(e.unsure !== undefined ? { unsure: e.unsure } : {}),
    };
  else if (e.t === 'failed') b.failed = { code: e.code, message: e.message };
  else if (e.t === 'unconfirmed') b.unconfirmed = { message: e.message };
  else if (e.t === 'expired') b.expired = true;
  else b.splitSize = e.size; // the one event left: a split
}

/** Folds a list of events into the run state (pure; undefined when the first is not a run header). */
export function foldEvents(events: JournalEvent[]): RunState | undefined {
  const first = events[0];
  if (!first || first.t !== 'run') return undefined;
  const state: RunState = { header: first, batches: new Map() };
  // Stryker disable next-line MethodExpression: applying the header again is the no-op above
  for (const e of events.slice(1)) applyEvent(state, e);
  return state;
}

/**
 * Parses journal text; a line that is no event is skipped: a blank one, a torn last line from a
 * crash, or a line damaged before the end. A run never resumes such a journal (readJournal
 * refuses it, JOURNAL_DAMAGED), but what reads it for a listing or a sweep (`jobs list`,
 * settling, retention) sees the events after the damage, which may be jobs already paid for.
 */
export function parseJournal(text: string): JournalEvent[] {
  return [...eventsOf(text)];
}

/** The events of journal text, in order, parsed as they are asked for (see parseJournal). */
function* eventsOf(text: string): Generator<JournalEvent, void> {
  for (const line of text.split('\n')) {
    const event = parseEvent(line);
    if (event) yield event;
  }
}

/**
 * The event a journal line holds; undefined for a line that is not JSON (blank, torn, damaged)
 * or JSON of no event (damage that happens to parse, an edit), which folding would trip over.
 */
function parseEvent(line: string): JournalEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // not JSON: no event
  }
  const type = (value as { t?: unknown } | null | undefined)?.t;
  return typeof type === 'string' ? (value as JournalEvent) : undefined;
}

/** An open journal: append events durably, read the folded state. */
export interface Journal {
  readonly path: string;
  readonly dir: string;
  readonly state: RunState;
  readonly resumed: boolean;
  append(event: NewEvent, options?: { durable?: boolean }): Promise<void>;
  /**
   * Removes the run this open began, when it began it and nothing was appended since: a run
   * stopped before it sent anything (another run writes its output) leaves no run for the next
   * one to resume. A run found on disk is kept. Call it before close (its lock still held).
   */
  discardNew(): Promise<void>;
  close(): Promise<void>;
}

/** Opens (or, with `restart` or none on disk, creates) the journal of a run in `runsDir`. */
export async function openJournal(opts: {
  runsDir: string;
  key: string;
  header: Omit<Extract<JournalEvent, { t: 'run' }>, 't' | 'v' | 'run' | 'nonce' | 'at'>;
  restart: boolean;
  now: () => number;
  /**
   * Whether the run found on disk is to be started over rather than resumed (decided with its
   * lock held, from its folded state): started over as with `restart`.
   */
  renew?: (found: RunState) => boolean;
}): Promise<Journal> {
  const dir = join(opts.runsDir, opts.key);
  const path = join(dir, 'journal.jsonl');
  const top = await makeRunDir(opts.runsDir, dir);
  // Nothing is sent before the journal is open: a full or read-only disk here is the user's
  // to mend (FILE_SYSTEM, naming the directory), not an internal error.
  const unlock = await acquireRunLock(dir, opts.header.command).catch((err: unknown) => {
    throw stateOpenError(dir, err);
  });
  // A run directory that will not be cleared is the user's to mend too (FILE_SYSTEM). On this
  // failure and on each one below, the lock is let go: it must not outlive this call.
  const startOver = () =>
    clearRun(dir).catch(async (err: unknown) => {
      await unlock();
      throw stateWriteError(dir, err);
    });
  if (opts.restart) await startOver();
  let read = await readJournal(path, dir).catch(async (err) => {
    await unlock();
    throw err;
  });
  if (read.state && opts.renew?.(read.state)) {
    await startOver();
    read = {};
  }
  const { state: found, tornAt, newline } = read;
  const resumed = found !== undefined;
  const opening = { ...opts, top };
  const { handle, state: live } = await openForAppend(
    path,
    found,
    { tornAt, newline },
    opening,
  ).catch(async (err: unknown) => {
    await unlock();
    throw stateOpenError(path, err);
  });
  let tail: Promise<void> = Promise.resolve();
  let appended = false;
  return {
    path,
    dir,
    state: live,
    resumed,
    append(event, options) {
      appended = true;
      const full = { ...event, at: opts.now() } as JournalEvent;
      applyEvent(live, full);
      // Lines are written in order, never interleaved; durable ones wait for the disk, and the
      // lines after them wait for it too (a bulk run's submissions keep their pace: letting them
      // overtake the flushes broke jobs-in-flight.test.ts "adaptive…").
      tail = tail.then(async () => {
        await writeAll(handle, `${JSON.stringify(full)}\n`);
        if (options?.durable) await handle.datasync();
      });
      return tail.catch((err) => {
        // A full disk or a removed state directory is the user's to mend (FILE_SYSTEM).
        throw isErrno(err) ? fsStateError(path, err) : journalError(path, err);
      });
    },
    async discardNew() {
      if (resumed || appended) return;
      await clearRun(dir).catch((err: unknown) => {
        throw stateWriteError(dir, err);
      });
    },
    async close() {
      await tail.catch(() => undefined);
      // The lock goes even when the file will not close: the same job is not refused after.
      await handle.close().finally(unlock);
    },
  };
}

/**
 * Awaits `step` (a check before anything is sent); when it throws, the run this open began is
 * discarded first (Journal.discardNew, best effort: the step's error is the news).
 */
export async function discardNewIfThrows<T>(journal: Journal, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (err) {
    await journal.discardNew().catch(() => undefined);
    throw err;
  }
}

/** Empties a run's directory to start it over, keeping the lock this process holds (and the start file beside it). */
async function clearRun(dir: string): Promise<void> {
  const doomed = (await readdir(dir)).filter((e) => e !== 'lock' && !e.startsWith('lock.'));
  // Stryker disable next-line BooleanLiteral: force only matters for an entry removed meanwhile (readdir just listed it)
  await Promise.all(doomed.map((e) => rm(join(dir, e), { recursive: true, force: true })));
}

/**
 * Makes the run's directory `dir` in `runsDir`; returns the highest directory whose entries
 * then name a new level (the parent of the first one made), or `dir` when it was there.
 */
async function makeRunDir(runsDir: string, dir: string): Promise<string> {
  const made = await mkdir(dir, { recursive: true, mode: 0o700 }).catch(
    (err: NodeJS.ErrnoException) => {
      // A state dir that is a file, or not ours to write: the user's setup, not a bug.
      throw new EnrichError(
        'USAGE',
        `cannot use the state directory ${runsDir}: ${err.code ?? err.message}`,
        {
          cause: err,
          hint: 'Point ENRICH_STATE_DIR at a directory you can write (run journals and results are kept there).',
        },
      );
    },
  );
  return made === undefined ? dir : dirname(made);
}

/**
 * Opens the journal to append to: a torn last line a crash left is cut (appending after it
 * would glue the next event onto it, and the run after that would lose every event from there
 * on); a new journal gets its header, on the disk before anything is sent. The file is closed
 * again if that fails.
 */
async function openForAppend(
  path: string,
  found: RunState | undefined,
  repair: { tornAt?: number; newline?: boolean },
  opts: {
    key: string;
    header: Parameters<typeof openJournal>[0]['header'];
    now: () => number;
    /** The highest directory whose entries a new journal's name depends on (syncDirsDown). */
    top: string;
  },
): Promise<{ handle: FileHandle; state: RunState }> {
  const handle = await open(path, found ? 'a' : 'w', 0o600);
  try {
    if (repair.tornAt !== undefined) await handle.truncate(repair.tornAt);
    if (repair.newline) await writeAll(handle, '\n');
    if (found) return { handle, state: found };
    const header = {
      t: 'run',
      v: 1,
      run: opts.key,
      nonce: randomUUID(),
      at: opts.now(),
      ...opts.header,
    } as const;
    await writeAll(handle, `${JSON.stringify(header)}\n`);
    await handle.datasync();
    // Its name (and its run directory's, when made just now) reaches the disk with its header:
    // after a power cut, a run whose first batch was sent is still found, and not sent again.
    await syncDirsDown(opts.top, dirname(path));
    return { handle, state: { header, batches: new Map() } };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Reads the journal of a run: its folded state (undefined for a new run) and, when its
 * last line is torn, the length to cut it to. A journal that is there but cannot be read
 * (damaged, emptied, or gone while the run's downloaded results are still there) is never
 * silently replaced: a new journal would draw new idempotency keys and pay again.
 */
async function readJournal(
  path: string,
  dir: string,
): Promise<{ state?: RunState; tornAt?: number; newline?: boolean }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw journalError(path, err);
    text = '';
  }
  const state = foldEvents(parseJournal(text));
  if (!state) {
    const spools = (await readdir(dir)).filter((f) => f.startsWith('results-'));
    if (text.trim() !== '' || spools.length > 0) throw damagedJournal(path, text, spools.length);
    return {};
  }
  const end = trustedEnd(text);
  if (end.damagedLine !== undefined) throw damagedLine(path, end.damagedLine);
  return { state, ...end };
}

/**
 * Where appending may start: after the last event (what parseJournal trusts).
 * A torn tail is cut off; a last event whose newline was lost gets it back (its event
 * counts: it may be a job the service accepted). A crash tears only the last line (a torn
 * tail is cut before anything is appended), so a line that is no event with events after it
 * is damage, not a crash: `damagedLine` names it (1-based), and nothing is cut, since the
 * events after it may be jobs the service accepted and charged for.
 */
function trustedEnd(text: string): { tornAt?: number; newline?: boolean; damagedLine?: number } {
  let end = 0;
  let lineNo = 0;
  // Stryker disable next-line EqualityOperator: at === length reads an empty last line, which changes nothing
  for (let at = 0; at < text.length;) {
    const nl = text.indexOf('\n', at);
    lineNo += 1;
    // Stryker disable next-line EqualityOperator: nl is 0 only for a journal that starts with a newline (never written)
    const stop = nl < 0 ? text.length : nl;
    const line = text.slice(at, stop);
    if (line.trim() !== '' && parseEvent(line) === undefined) {
      if (text.slice(stop + 1).trim() !== '') return { damagedLine: lineNo };
      break;
    }
    // Stryker disable next-line EqualityOperator,ConditionalExpression,MethodExpression,StringLiteral: a newline after a blank unterminated tail only adds a blank line, which readers skip
    if (nl < 0) return { newline: line.trim() !== '' };
    end = at = nl + 1;
  }
  // Stryker disable next-line ConditionalExpression: cutting at the end cuts nothing
  return end === text.length ? {} : { tornAt: Buffer.byteLength(text.slice(0, end)) };
}

/** A journal with a line that is no event before other events: never cut, never resumed. */
function damagedLine(path: string, line: number): EnrichError {
  return new EnrichError(
    'JOURNAL_DAMAGED',
    `the run journal ${path} is damaged: line ${line} is not a journal event, and events follow it (a crash tears only the last line)`,
    {
      location: { file: path, line },
      hint: `Nothing was sent. Put the journal back (from a backup), or mend or delete line ${line} (the events after it may be jobs already paid for), then run the command again to resume; or start the run over with restart, which sends and pays for every row again.`,
    },
  );
}

function damagedJournal(path: string, text: string, spools: number): EnrichError {
  const what =
    text.trim() === ''
      ? `is ${text === '' ? 'missing or empty' : 'blank'}, while ${spools} downloaded result file(s) of the run are beside it`
      : 'does not start with a run header (it was damaged or edited)';
  return new EnrichError('JOURNAL_DAMAGED', `the run journal ${path} ${what}`, {
    location: { file: path },
    hint: 'Nothing was sent. Put the journal back (from a backup) to resume the run; or start the run over with restart, which sends and pays for every row again.',
  });
}

function journalError(path: string, err: unknown): EnrichError {
  return new EnrichError(
    'INTERNAL',
    `cannot write the run journal ${path}: ${(err as Error).message}`,
    { cause: err },
  );
}

/**
 * Writes all of `text` at the end of the journal. A write can take fewer bytes than asked
 * without an error (a disk filling up takes what fits in its last page): the rest is written
 * again, so the disk's refusal comes as ENOSPC, never a line torn in silence that the run takes
 * for written (and a resume would cut, losing the event it guards).
 */
export async function writeAll(handle: Pick<FileHandle, 'write'>, text: string): Promise<void> {
  const bytes = Buffer.from(text);
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
    if (bytesWritten === 0)
      throw Object.assign(new Error('no space left on device, write'), { code: 'ENOSPC' });
    done += bytesWritten;
  }
}

/**
 * A failure of the user's file system (a full disk, a quota, a directory removed or made
 * read-only), not a bug of ours: a write on a closed file (EBADF) stays an internal error.
 */
const ENVIRONMENT = new Set([
  'ENOSPC',
  'EDQUOT',
  'EFBIG',
  'EROFS',
  'EACCES',
  'EPERM',
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EIO',
  'EMFILE',
  'ENFILE',
]);
function isErrno(err: unknown): err is NodeJS.ErrnoException {
  return ENVIRONMENT.has((err as NodeJS.ErrnoException | undefined)?.code as string);
}

/**
 * A write under the state directory (the run journal, a spool file, the run lock) that the
 * file system refused: a full disk, a quota, a directory removed or made read-only. The
 * user's to mend, so FILE_SYSTEM (exit 2) naming the file and the cause, never an internal
 * error; the journal is kept, so the same command pays for nothing twice once it is mended.
 * Anything else (an EnrichError already worded, or no errno) is passed on as it is.
 */
export function stateWriteError(path: string, err: unknown): unknown {
  return err instanceof EnrichError || !isErrno(err) ? err : fsStateError(path, err);
}

/**
 * Opening a run under the state directory failed: FILE_SYSTEM as stateWriteError words it for
 * a failure of the file system; anything else (no errno, a bug such as EBADF) still an error
 * naming the path, never sent on as it came.
 */
export function stateOpenError(path: string, err: unknown): EnrichError {
  return isErrno(err) ? fsStateError(path, err) : fileSystemError('write', path, err);
}

function fsStateError(path: string, err: NodeJS.ErrnoException): EnrichError {
  const worded = fileSystemError('write', path, err);
  const mend =
    err.code === 'ENOSPC' || err.code === 'EDQUOT'
      ? 'Free some space in the state directory (ENRICH_STATE_DIR)'
      : 'Make the state directory (ENRICH_STATE_DIR) writable again';
  return new EnrichError(worded.code, worded.message, {
    cause: err,
    location: worded.location,
    details: worded.details,
    hint: `${mend}, then run the same command again: the run journal is kept, so nothing paid is bought again.`,
  });
}

/** A journaled run as listed by `enrich jobs`. */
export interface JournaledRun {
  key: string;
  dir: string;
  state: RunState;
  modifiedAt: number;
}

/**
 * For a new run `key`: the other runs of the same kind and request options (service and account
 * included), newest first, by their headers (`run` is each one's key): those of the same input
 * path read another content (the file changed since); those of other files (a dated export, a
 * copy) may hold rows this run holds too. Their jobs paid for rows this run may send again.
 * Reads only the start of each journal.
 */
export async function earlierRunsOf(
  runsDir: string,
  key: string,
  run: { kind: string; options: Record<string, unknown> },
): Promise<Extract<JournalEvent, { t: 'run' }>[]> {
  const options = JSON.stringify(sortKeys(run.options));
  return runsMatching(
    runsDir,
    key,
    (h) => h.kind === run.kind && JSON.stringify(sortKeys(h.options)) === options,
  );
}

/** The runs under `runsDir` but `key` whose header `match` accepts, newest first (journals' starts only). */
export async function runsMatching(
  runsDir: string,
  key: string,
  match: (header: Extract<JournalEvent, { t: 'run' }>) => boolean,
): Promise<Extract<JournalEvent, { t: 'run' }>[]> {
  const found: Extract<JournalEvent, { t: 'run' }>[] = [];
  for (const name of await readdir(runsDir).catch(() => [] as string[])) {
    if (name === key) continue;
    const h = await readHeader(join(runsDir, name, 'journal.jsonl'));
    if (h && match(h)) found.push(h);
  }
  return found.sort((a, b) => b.at - a.at);
}

/**
 * The folded state of the run `key` as its journal is now, read without its lock (undefined
 * when it cannot be read): enough to tell whether it left jobs to download, before taking it.
 */
export function peekRun(runsDir: string, key: string): Promise<RunState | undefined> {
  return readFile(join(runsDir, key, 'journal.jsonl'), 'utf8').then(
    (text) => foldEvents(parseJournal(text)),
    () => undefined,
  );
}

/** True when the run `key` has a journal already (running the same command again resumes it). */
export function hasJournal(runsDir: string, key: string): Promise<boolean> {
  return stat(join(runsDir, key, 'journal.jsonl')).then(
    () => true,
    () => false,
  );
}

/**
 * The `run` event a journal starts with, as a fold finds it (its first event), read from its
 * first 64 KB only: a sweep of every run reads no whole journal.
 */
async function readHeader(path: string): Promise<Extract<JournalEvent, { t: 'run' }> | undefined> {
  let fh: FileHandle | undefined;
  let text: string;
  try {
    fh = await open(path, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    text = buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined; // not a run directory, or a journal that cannot be read
  } finally {
    await fh?.close(); // a sweep reads every run's: one left open each would run out of files
  }
  const first = eventsOf(text).next().value;
  return first?.t === 'run' ? first : undefined;
}

/** Lists every journaled run under `runsDir`, newest first: by when each started (its header), then its last change. */
export async function listRuns(runsDir: string): Promise<JournaledRun[]> {
  const names = await readdir(runsDir).catch(() => [] as string[]);
  const runs: JournaledRun[] = [];
  for (const key of names) {
    const path = join(runsDir, key, 'journal.jsonl');
    try {
      const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
      const state = foldEvents(parseJournal(text));
      if (state) runs.push({ key, dir: join(runsDir, key), state, modifiedAt: st.mtimeMs });
    } catch {
      // not a run directory
    }
  }
  return runs.sort((a, b) => b.state.header.at - a.state.header.at || b.modifiedAt - a.modifiedAt);
}
