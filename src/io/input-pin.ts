import { open, realpath, stat } from 'node:fs/promises';
import { EnrichError } from '../errors.js';

/** Which file a path names, whatever the path: its real path (symlinks resolved), device and inode. */
export interface FileId {
  realPath: string;
  dev: number;
  ino: number;
}

/** True when two ids name the same file: same device and inode, or the same real path. */
export function sameFile(a: FileId, b: FileId): boolean {
  return (a.dev === b.dev && a.ino === b.ino) || a.realPath === b.realPath;
}

/** The id of the file at `path` (symlinks followed), or undefined when there is none. */
export async function fileIdOf(path: string): Promise<FileId | undefined> {
  try {
    const realPath = await realpath(path);
    const info = await stat(realPath);
    return { realPath, dev: info.dev, ino: info.ino };
  } catch {
    return undefined;
  }
}

/** What the input was when first read: a later pass must find the same file with the same bytes. */
export interface Pin {
  id: FileId;
  size: number;
  mtimeMs: number;
  /** The first bytes (the detection sample), compared again on each pass: a cheap check of the content. */
  head: Buffer;
}

/** Pins `filePath` as it is now. */
export async function pinFile(filePath: string, head: Buffer): Promise<Pin> {
  const realPath = await realpath(filePath);
  const info = await stat(realPath);
  return {
    id: { realPath, dev: info.dev, ino: info.ino },
    size: info.size,
    mtimeMs: info.mtimeMs,
    head,
  };
}

/** Throws INPUT_CHANGED when the file at `filePath` is no longer the one pinned (replaced, appended, rewritten). */
export async function checkPin(name: string, filePath: string, pin: Pin): Promise<void> {
  const why = await changeOf(filePath, pin);
  if (why === undefined) return;
  throw new EnrichError(
    'INPUT_CHANGED',
    `${name} changed during the run (${why}): its rows would no longer match the rows already sent, so the run stops`,
    {
      location: { file: name },
      hint: 'Keep the input unchanged while a run reads it (copy it first if something else writes to it). Run the same command again: the original content resumes its run without paying twice; new content is a new run.',
    },
  );
}

async function changeOf(filePath: string, pin: Pin): Promise<string | undefined> {
  const info = await stat(filePath).catch(() => undefined);
  if (!info) return 'it is gone';
  if (info.dev !== pin.id.dev || info.ino !== pin.id.ino) return 'it was replaced by another file';
  if (info.size !== pin.size) return `its size went from ${pin.size} to ${info.size} bytes`;
  if (info.mtimeMs !== pin.mtimeMs) return 'it was modified';
  const fh = await open(filePath, 'r');
  try {
    const now = Buffer.alloc(pin.head.length);
    const { bytesRead } = await fh.read(now, 0, now.length, 0);
    if (bytesRead !== pin.head.length || !now.equals(pin.head)) return 'its first bytes differ';
  } finally {
    await fh.close();
  }
  return undefined;
}
