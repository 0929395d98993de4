import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { chown, chmod, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import type { EnrichError } from '../errors.js';
import { checkOutputTarget, fileSystemError, type OutputTarget } from './output-target.js';
import { removeStaleTemps, tempNameFor, trackTemp } from './stale-temps.js';
import { syncDir } from './sync-dir.js';
import { createGzip } from 'node:zlib';
import { isGzipName } from './file-format.js';
import { csvSink, jsonSink, type Sink } from './write-sinks.js';
import { xlsxSink } from './write-xlsx.js';
import type { OutputRow, OutputWriterOptions } from './write-types.js';

export {
  STATUS_COLUMNS,
  type OutputRow,
  type OutputWriterOptions,
  type RowStatus,
} from './write-types.js';
export {
  checkOutputTarget,
  refuseInputAsOutput,
  type OutputTarget,
  type WriteMode,
} from './output-target.js';
export { fileIdOf, sameFile, type FileId } from './input-pin.js';

/** Writes rows; every failure (disk full, EPIPE, a removed directory) rejects with an EnrichError. */
export interface OutputWriter {
  write(row: OutputRow): Promise<void>;
  /**
   * Writes the rows gathered so far (CSV, TSV and JSON gather them in blocks) without
   * waiting for more: a reader sees them now, and a reader that went away is seen at once.
   */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Stops writing; an atomic output leaves no temp file and the old file as it was. */
  abort(): Promise<void>;
}

/** The open destination: the stream rows go to and how to finish or undo it. */
interface Destination {
  out: Writable;
  finish(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * Opens an output writer: CSV/TSV (csv-stringify) or JSON/JSONL. A regular file is
 * written to a temp file renamed into place on close (keeping the old file's mode);
 * a device, a pipe or stdout is written through.
 */
export async function createOutputWriter(options: OutputWriterOptions): Promise<OutputWriter> {
  const target = await checkOutputTarget(options.target);
  const dest = await openDestination(target, options.stdout);
  // Said as main.ts says a failure of stdout: "cannot write standard output", not "-".
  const name = target.mode === 'stdout' ? 'standard output' : options.target;
  let failure: EnrichError | undefined;
  const fail = (err: unknown): EnrichError => {
    failure ??= fileSystemError('write', name, err);
    return failure;
  };
  dest.out.on('error', (err) => fail(err));
  const gzip = options.gzip ?? isGzipName(options.target);
  const zipped = gzip ? gzipInto(dest.out) : undefined;
  zipped?.stream.on('error', (err) => fail(err));
  const sink = await openSink(options, zipped?.stream ?? dest.out).catch(async (err: unknown) => {
    await dest.discard();
    throw fail(err);
  });
  let ended = false;
  const settle = async (err: unknown): Promise<never> => {
    // Stryker disable next-line BooleanLiteral: an abort after this only discards again, which changes nothing (destroy, rm with force, untrack)
    ended = true;
    await dest.discard().catch(() => undefined);
    throw fail(err);
  };
  return {
    async write(row) {
      if (failure) return settle(failure);
      await sink.write(row).catch(settle);
    },
    async flush() {
      if (failure) return settle(failure);
      await sink.flush?.().catch(settle);
    },
    async close() {
      if (failure) return settle(failure);
      try {
        await sink.end();
        await zipped?.end();
        await dest.finish();
        // Stryker disable next-line BooleanLiteral: an abort after a close only discards a temp already renamed away (rm with force): the output stays
        ended = true;
      } catch (err) {
        await settle(err);
      }
    },
    async abort() {
      if (ended) return;
      // Stryker disable next-line BooleanLiteral: discarding again (after a close or an abort) changes nothing, see above
      ended = true;
      await dest.discard();
    },
  };
}

/** The sink of a format: text (CSV/TSV), JSON, or a workbook. */
async function openSink(o: OutputWriterOptions, out: Writable): Promise<Sink> {
  if (o.format === 'xlsx') return xlsxSink(o, out);
  if (o.format === 'csv' || o.format === 'tsv') return csvSink(o, out);
  return jsonSink(o, out);
}

/** A gzip stream (node:zlib) into `out`, which it never ends: `end` flushes it into `out`. */
function gzipInto(out: Writable): { stream: Writable; end(): Promise<void> } {
  const stream = createGzip();
  stream.pipe(out, { end: false });
  // A pipe stops at an error of `out` and gzip would then wait for ever for a reader (a full
  // disk hung the run): it fails with `out`.
  out.once('error', (err) => stream.destroy(err));
  const done = new Promise<void>((ok, fail) => {
    stream.on('end', ok);
    stream.on('error', fail);
  });
  done.catch(() => undefined); // failures also reach `fail` through the error listener
  return {
    stream,
    end: async () => {
      stream.end();
      await done;
    },
  };
}

async function openDestination(target: OutputTarget, stdout?: Writable): Promise<Destination> {
  if (target.mode === 'stdout') {
    const out = stdout ?? process.stdout;
    return { out, finish: async () => undefined, discard: async () => undefined };
  }
  if (target.mode === 'stream') {
    // Appended, never truncated: `/dev/stdout` may be a file the shell opened with >>.
    const file = await openStream(target.name, target.path, 'a');
    return { out: file, finish: () => endStream(file), discard: async () => void file.destroy() };
  }
  const dir = dirname(target.path);
  const temp = join(
    dir,
    tempNameFor(basename(target.path), process.pid, randomBytes(4).toString('hex')),
  );
  await removeStaleTemps(dir, basename(target.path));
  const file = await openStream(target.name, temp, 'wx');
  const untrack = trackTemp(temp);
  const discard = async () => {
    file.destroy();
    await rm(temp, { force: true });
    untrack();
  };
  const finish = async () => {
    await endStream(file);
    await keepOwnership(temp, target);
    const fh = await open(temp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, target.path);
    untrack();
    // The rename itself reaches the disk: after exit 0, a power cut leaves the new output.
    await syncDir(dir);
  };
  return { out: file, finish, discard };
}

/** An existing output keeps its permissions (a 0600 file stays 0600) and, for root, its owner. */
async function keepOwnership(temp: string, target: OutputTarget): Promise<void> {
  if (!target.existing) return; // a new file: the umask decided its mode at open
  await chmod(temp, target.existing.mode);
  if (process.getuid?.() === 0) await chown(temp, target.existing.uid, target.existing.gid);
}

function openStream(name: string, path: string, flags: string): Promise<WriteStream> {
  const file = createWriteStream(path, { flags, mode: 0o666 });
  return new Promise<WriteStream>((ok, fail) => {
    file.once('open', () => ok(file));
    file.once('error', (err) => fail(fileSystemError('write', name, err)));
  });
}

function endStream(file: WriteStream): Promise<void> {
  return new Promise<void>((ok, fail) => {
    if (file.errored) {
      fail(file.errored);
      return;
    }
    file.end((err?: Error | null) => (err ? fail(err) : ok()));
  });
}
