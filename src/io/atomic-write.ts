import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { checkOutputTarget, fileSystemError, followLinks } from './output-target.js';
import { removeStaleTemps, tempNameFor } from './stale-temps.js';
import { syncDir } from './sync-dir.js';

/**
 * Writes a whole file atomically: a temp file beside the target (named for this
 * process, so temps of writers that died are swept on the next write), fsync, rename.
 * A reader sees the old file or the new one, never half of one. A symlink is followed
 * (its target is replaced, the link stays); a device or a FIFO is written through, never
 * replaced; an existing file keeps its permissions. Errors are the file system's own
 * (errno codes): `writeOutputFile` words them for the user.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: { mode?: number; sweep?: boolean } = {},
): Promise<void> {
  const path = await followLinks(target, resolve(target));
  const info = await stat(path).catch(() => undefined);
  if (info && (info.isCharacterDevice() || info.isFIFO())) {
    const fh = await open(path, 'a');
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    return;
  }
  const dir = dirname(path);
  if (options.sweep !== false) await removeStaleTemps(dir, basename(path));
  const temp = join(dir, tempNameFor(basename(path), process.pid, randomBytes(4).toString('hex')));
  const handle = await open(temp, 'wx', options.mode ?? 0o666);
  try {
    try {
      await handle.writeFile(data);
      if (info?.isFile() && options.mode === undefined) await chmod(temp, info.mode & 0o7777);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  // The rename itself reaches the disk (a power cut then leaves the new file).
  await syncDir(dir);
}

/**
 * Writes a file the user named (`--save-mapping`, `jobs fetch -o`): '-' is stdout, a
 * regular file is replaced atomically, a device or pipe written through; a target that
 * cannot be written is a USAGE error, a failure while writing a FILE_SYSTEM one, both
 * naming the path and the cause.
 */
export async function writeOutputFile(target: string, data: string | Uint8Array): Promise<void> {
  const checked = await checkOutputTarget(target);
  if (checked.mode === 'stdout') {
    await new Promise<void>((ok, fail) =>
      process.stdout.write(data, (err) =>
        err ? fail(fileSystemError('write', target, err)) : ok(),
      ),
    );
    return;
  }
  await writeFileAtomic(target, data).catch((err: unknown) => {
    throw fileSystemError('write', target, err);
  });
}
