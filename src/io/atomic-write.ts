import { randomBytes } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { removeStaleTemps, tempNameFor } from './stale-temps.js';

/**
 * Writes a whole file atomically: a temp file beside the target (named for this
 * process, so temps of writers that died are swept on the next write), fsync, rename.
 * A reader sees the old file or the new one, never half of one.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: { mode?: number; sweep?: boolean } = {},
): Promise<void> {
  const path = resolve(target);
  const dir = dirname(path);
  if (options.sweep !== false) await removeStaleTemps(dir, basename(path));
  const temp = join(dir, tempNameFor(basename(path), process.pid, randomBytes(4).toString('hex')));
  const handle = await open(temp, 'wx', options.mode ?? 0o644);
  try {
    await handle.writeFile(data);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}
