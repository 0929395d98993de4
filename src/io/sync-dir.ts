import { open } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Errors of a file system that cannot flush a directory at all (not of a failing disk). */
const CANNOT_SYNC_DIRS = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EPERM', 'EBADF']);

/**
 * Flushes the entries of directory `dir` to the disk: a file made, renamed or removed in it
 * then survives a power cut (flushing a file's data does not flush its name, by POSIX). Where
 * a directory cannot be opened for reading (Windows; a directory without read permission) or
 * its file system cannot flush one (some network and FUSE file systems answer EINVAL), its
 * entries are as durable as the system makes them. A failing disk (EIO, ENOSPC) is thrown.
 */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  // Stryker disable next-line ConditionalExpression: Linux opens every directory it can list (root any): going on would throw where the caller already stands to lose only durability
  if (!handle) return;
  try {
    await handle.sync().catch((err: NodeJS.ErrnoException) => {
      // Stryker disable next-line StringLiteral: any text that is no code in the set throws alike
      if (!CANNOT_SYNC_DIRS.has(err.code ?? '')) throw err;
    });
  } finally {
    await handle.close();
  }
}

/**
 * Flushes the entries of `dir` and of every directory above it down from `top` (an ancestor of
 * `dir`, or `dir` itself): after `mkdir(dir, { recursive: true })` made its levels below `top`,
 * each new level's name is then on the disk with what `dir` holds.
 */
export async function syncDirsDown(top: string, dir: string): Promise<void> {
  const levels = [dir];
  while (levels[0] !== top && dirname(levels[0] as string) !== levels[0])
    levels.unshift(dirname(levels[0] as string));
  for (const level of levels) await syncDir(level);
}
