/**
 * The --state log: every change of the sandbox's state is appended as one JSON line before
 * memory changes, and an answer is sent only once the log is on disk (`persisted`, one
 * fdatasync for every change made meanwhile: group commit). Compaction rewrites the log as a
 * snapshot of what is live, streamed line by line to a temp file that replaces the log by rename.
 */
import {
  closeSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { eventPieces, headerLine } from './state-lines.js';
import type { StateEvent, Store } from './store.js';

/** When the log is rewritten: past `minBytes` and more than twice what is live. */
export interface CompactionPolicy {
  minBytes: number;
}

/** Writes `pieces` at the end of `fd`, whole (a short write is continued). */
function writeAll(fd: number, pieces: string[]): number {
  let total = 0;
  for (const piece of pieces) {
    const buf = Buffer.from(piece, 'utf8');
    for (let at = 0; at < buf.length;) at += writeSync(fd, buf, at, buf.length - at);
    total += buf.length;
  }
  return total;
}

async function writeAllAsync(fh: FileHandle, piece: string): Promise<void> {
  const buf = Buffer.from(piece, 'utf8');
  for (let at = 0; at < buf.length;) at += (await fh.write(buf, at, buf.length - at)).bytesWritten;
}

/** Makes a rename in `dir` durable. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The lines of a snapshot of `store` as it is now: header, clock, accounts, keys, then one line
 * per job. Accounts and keys change in place, so they are copied now; jobs never change once made.
 */
function snapshotLines(store: Store): Iterable<string[]> {
  const accounts = [...store.accounts.values()].map((a) => ({ ...a }));
  const keys = [...store.keys.values()].map((k) => ({ ...k }));
  const jobs = [...store.jobs.values()];
  const head = [
    [headerLine(store.adminToken)],
    eventPieces({ t: 'clock', offset: store.clockOffset }),
  ];
  return (function* () {
    yield* head;
    for (const account of accounts) yield eventPieces({ t: 'account', account });
    for (const key of keys) yield eventPieces({ t: 'key', key });
    for (const job of jobs) yield eventPieces({ t: 'job', job });
  })();
}

/** Writes a whole snapshot of `store` to `file` at once (temp file, fsync, rename). */
export function writeSnapshotSync(file: string, store: Store): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    for (const pieces of snapshotLines(store)) writeAll(fd, pieces);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  syncDir(dirname(file));
}

/** An open --state log. */
export class StateLog {
  private fd: number;
  private size: number;
  private written = 0;
  private synced = 0;
  private syncing: Promise<void> | undefined;
  /** Lines appended while a compaction runs (they go to the new log too). */
  private tee: string[][] | undefined;
  private compaction: Promise<void> | undefined;
  private abort = false;
  private closed = false;
  /** The log's size after the last compaction failed: no new try before it doubles. */
  private failedAt = 0;
  /** Compactions finished (for tests and the curious). */
  compactions = 0;

  constructor(
    readonly file: string,
    private readonly store: Store,
    private readonly policy: CompactionPolicy,
  ) {
    this.fd = openSync(file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
    store.record = (event) => this.append(event);
  }

  /** Bytes in the log now. */
  get bytes(): number {
    return this.size;
  }

  /** Appends one change (synchronously, so it is in the file before memory changes). */
  append(event: StateEvent): void {
    if (this.closed) throw new Error(`sandbox state: ${this.file} is closed`);
    const pieces = eventPieces(event);
    try {
      this.size += writeAll(this.fd, pieces);
    } catch (err) {
      // Cut a partial line off, so the next change does not follow half a line.
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        // The replay treats what is left as a torn last line.
      }
      throw new Error(`sandbox state: cannot write ${this.file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    this.written++;
    this.tee?.push(pieces);
    this.maybeCompact();
  }

  /** Resolves once every change appended so far is on disk (one fdatasync serves many changes). */
  async persisted(): Promise<void> {
    const target = this.written;
    while (this.synced < target) {
      this.syncing ??= this.syncOnce();
      await this.syncing;
    }
  }

  private syncOnce(): Promise<void> {
    const upto = this.written;
    return new Promise<void>((resolve, reject) => {
      fdatasync(this.fd, (err) => {
        this.syncing = undefined;
        if (err) reject(new Error(`sandbox state: cannot sync ${this.file}: ${err.message}`));
        else {
          this.synced = Math.max(this.synced, upto);
          resolve();
        }
      });
    });
  }

  private maybeCompact(): void {
    if (this.compaction || this.closed) return;
    const live = liveBytes(this.store);
    const over = Math.max(this.policy.minBytes, 2 * live, 2 * this.failedAt);
    if (this.size <= over) return;
    this.compaction = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.compact())
      .finally(() => (this.compaction = undefined));
  }

  /** Rewrites the log as a snapshot of what is live now (in the background; changes go on). */
  async compact(): Promise<void> {
    if (this.closed) return;
    const tmp = `${this.file}.${process.pid}.compact.tmp`;
    this.abort = false;
    const fh = await open(tmp, 'w', 0o600);
    // The snapshot is the state now; every change from now on is kept for the new log too.
    const lines = snapshotLines(this.store);
    this.tee = [];
    try {
      for (const pieces of lines) {
        for (const piece of pieces) await writeAllAsync(fh, piece);
        if (this.abort) throw new Error('closed during compaction');
      }
      // Everything since the snapshot, then the switch: one synchronous step, so no change
      // can fall between the two files.
      writeAll(fh.fd, this.tee.flat());
      fsyncSync(fh.fd);
      renameSync(tmp, this.file);
      syncDir(dirname(this.file));
      this.switchTo(this.file);
      this.compactions++;
    } catch (err) {
      this.failedAt = this.size;
      try {
        unlinkSync(tmp);
      } catch {
        // Already gone.
      }
      if (!this.abort)
        process.emitWarning(`sandbox state: compaction of ${this.file} failed: ${String(err)}`);
    } finally {
      this.tee = undefined;
      await fh.close().catch(() => undefined);
    }
  }

  private switchTo(file: string): void {
    const old = this.fd;
    const inflight = this.syncing;
    this.fd = openSync(file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
    // The new file was fsynced with every change in it.
    this.synced = this.written;
    if (inflight) void inflight.catch(() => undefined).finally(() => closeSync(old));
    else closeSync(old);
  }

  /** Waits for a running compaction (tests). */
  async settled(): Promise<void> {
    await this.compaction;
  }

  /** Syncs and closes the log; a running compaction is abandoned (the log stays whole). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.abort = true;
    await this.compaction;
    await this.persisted().catch(() => undefined);
    this.closed = true;
    // Changes after close (in-process admin calls) are no longer kept.
    this.store.record = () => {};
    await this.syncing?.catch(() => undefined);
    closeSync(this.fd);
  }
}

/** Roughly what a snapshot of `store` takes: its jobs' results plus a line per account and key. */
export function liveBytes(store: Store): number {
  let bytes = 0;
  for (const u of store.usage.values()) bytes += u.bytes + u.jobs * 300;
  return bytes + (store.accounts.size + store.keys.size) * 300;
}
