import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

/**
 * Runs `fn` with a directory on a tmpfs of its own, mounted with `options` (`size=1m` makes
 * a full disk, `ro,size=64k` a read-only file system), then unmounts and removes it. Needs
 * root (mount). `lazy`: detach it even while a process still maps a file there (lmdb keeps a
 * failed environment mapped).
 */
export async function withTmpfs<T>(
  options: string,
  fn: (dir: string) => Promise<T>,
  { lazy = false } = {},
): Promise<T> {
  expect(process.getuid?.() === 0, 'run as root: mount needs it').toBe(true);
  const root = await mkdtemp(join(tmpdir(), 'enrich-tmpfs-'));
  const dir = join(root, 'fs');
  await mkdir(dir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  try {
    return await fn(dir);
  } finally {
    execFileSync('umount', lazy ? ['-l', dir] : [dir]);
    await rm(root, { recursive: true, force: true });
  }
}
