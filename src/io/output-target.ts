import { constants, fstatSync } from 'node:fs';
import { access, lstat, readlink, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { EnrichError } from '../errors.js';
import { sameFile, type FileId } from './input-pin.js';

/**
 * How an output is written: `stdout` for '-'; `atomic` for a regular file (a temp file
 * beside it, renamed into place); `stream` for what must never be replaced (a character
 * device, a FIFO, `/dev/stdout`, a process substitution's `/dev/fd/N`): written through.
 */
export type WriteMode = 'stdout' | 'atomic' | 'stream';

/** Where and how an output goes. */
export interface OutputTarget {
  mode: WriteMode;
  /** The path as the user named it (for messages). */
  name: string;
  /** The file actually written: for `atomic` the real path (a symlink's target), '' for stdout. */
  path: string;
  /** `atomic` over an existing file: its permission bits (kept by the new file), uid and gid. */
  existing?: { mode: number; uid: number; gid: number };
  /** The file there now (real path, device, inode), when there is one: to refuse writing over the input. */
  file?: FileId;
}

/** Refuses an output that is the input file itself (the input is read while the output is written). */
export function refuseInputAsOutput(input: FileId | undefined, target: OutputTarget): void {
  if (!input || !target.file || !sameFile(input, target.file)) return;
  if (target.mode === 'stdout')
    throw new EnrichError(
      'USAGE',
      `standard output is the input file ${input.realPath} (\`>> ${input.realPath}\`): the output would be written into the file while it is read`,
      {
        location: { file: input.realPath },
        hint: 'Write the output to another file (-o enriched.csv, or > enriched.csv).',
      },
    );
  throw refuse(
    target.name,
    `it is the input file (${input.realPath}), which is read again while the output is written`,
    'Write the output to another file.',
  );
}

/** What an errno means to the user, in words. */
export function fsCause(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EISDIR':
      return 'it is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'the disk is full (no space left on the device)';
    case 'EDQUOT':
      return 'the disk quota is exceeded';
    case 'EPIPE':
      return 'the reading end was closed';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    default:
      return e.message;
  }
}

/** A file-system failure on `name` as an EnrichError (FILE_SYSTEM, exit 2) naming the path and the cause. */
export function fileSystemError(verb: 'read' | 'write', name: string, err: unknown): EnrichError {
  if (err instanceof EnrichError) return err;
  const errno = (err as NodeJS.ErrnoException).code;
  if (verb === 'write' && errno === 'EPIPE') {
    return new EnrichError('OUTPUT_CLOSED', `cannot write ${name}: ${fsCause(err)}`, {
      cause: err,
      location: { file: name },
      hint: 'The program reading the output stopped early; nothing more is sent. Run again to resume.',
      details: { errno },
    });
  }
  return new EnrichError('FILE_SYSTEM', `cannot ${verb} ${name}: ${fsCause(err)}`, {
    cause: err,
    location: { file: name },
    details: { errno },
    ...(errno === 'ENOSPC'
      ? { hint: 'Free some space (or write elsewhere), then run again.' }
      : {}),
  });
}

const refuse = (name: string, why: string, hint?: string) =>
  new EnrichError('USAGE', `cannot write ${name}: ${why}`, {
    location: { file: name },
    ...(hint ? { hint } : {}),
  });

/**
 * The regular file standard output writes to (`enrich … >> leads.csv`), or undefined (a terminal,
 * a pipe, a device). Only its device and inode tell it: it has no path of its own here.
 */
function stdoutFile(): FileId | undefined {
  try {
    const info = fstatSync(1);
    return info.isFile() ? { realPath: '', dev: info.dev, ino: info.ino } : undefined;
  } catch {
    return undefined;
  }
}

/** Names the OS gives to streams rather than files: never replaced, whatever they point to. */
const STREAM_PATH = /^\/(dev|proc)\//;

/**
 * Decides how `target` is written and refuses, before anything is sent, a target that
 * cannot be: a missing or read-only directory, a directory, no permission. A symlink is
 * followed: its target gets the new content and the link stays a link.
 */
export async function checkOutputTarget(
  target: string,
  /** How the caller names this target in a hint (a flag), with a file name to suggest. */
  naming: { as: string; example: string } = { as: '', example: 'enriched.csv' },
): Promise<OutputTarget> {
  if (target === '-') {
    const file = stdoutFile();
    return { mode: 'stdout', name: target, path: '', ...(file ? { file } : {}) };
  }
  const absolute = resolve(target);
  if (STREAM_PATH.test(absolute)) {
    await access(absolute, constants.W_OK).catch((err: unknown) => {
      throw refuse(target, fsCause(err));
    });
    return { mode: 'stream', name: target, path: absolute };
  }
  const real = await followLinks(target, absolute);
  const info = await stat(real).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw refuse(target, fsCause(err));
  });
  if (info?.isDirectory()) {
    throw refuse(
      target,
      'it is a directory',
      `Name a file in it, for example ${naming.as ? `${naming.as} ` : ''}${join(target, naming.example)}`,
    );
  }
  if (info && (info.isCharacterDevice() || info.isFIFO())) {
    await access(real, constants.W_OK).catch((err: unknown) => {
      throw refuse(target, fsCause(err));
    });
    return { mode: 'stream', name: target, path: real, file: idOf(real, info) };
  }
  if (info && !info.isFile()) throw refuse(target, 'it is not a regular file, a device or a pipe');
  await checkDirectory(target, dirname(real));
  if (info) {
    await access(real, constants.W_OK).catch((err: unknown) => {
      throw refuse(target, fsCause(err));
    });
  }
  if (!info) return { mode: 'atomic', name: target, path: real };
  const existing = { mode: info.mode & 0o7777, uid: info.uid, gid: info.gid };
  return { mode: 'atomic', name: target, path: real, existing, file: idOf(real, info) };
}

const idOf = (realPath: string, info: { dev: number; ino: number }): FileId => ({
  realPath,
  dev: info.dev,
  ino: info.ino,
});

/** The temp file and the rename need a directory that exists and can be written. */
async function checkDirectory(name: string, dir: string): Promise<void> {
  const info = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    throw refuse(
      name,
      err.code === 'ENOENT' ? `its directory ${dir} does not exist` : fsCause(err),
      err.code === 'ENOENT' ? `Create it first (mkdir -p ${dir}) or write elsewhere.` : undefined,
    );
  });
  if (!info.isDirectory()) throw refuse(name, `${dir} is not a directory`);
  await access(dir, constants.W_OK).catch((err: unknown) => {
    throw refuse(name, `its directory ${dir}: ${fsCause(err)}`);
  });
}

/** The path a chain of symlinks ends at (which may not exist yet: a dangling link names the file to create). */
export async function followLinks(name: string, path: string): Promise<string> {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    const info = await lstat(current).catch(() => undefined);
    if (!info?.isSymbolicLink()) return current;
    current = resolve(dirname(current), await readlink(current));
  }
  throw refuse(name, 'too many levels of symbolic links');
}
