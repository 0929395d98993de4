import { mkdir, mkdtemp, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { syncDir, syncDirsDown } from '../../src/io/sync-dir.js';
import { watchFlushes } from '../helpers/flushes.js';

// Flushing a directory's entries (a new file's name, a rename) to the disk: what a file system
// that cannot do it answers is not a failure of the run; a failing disk is.

afterEach(() => {
  vi.restoreAllMocks();
});

/** Makes every FileHandle's sync() fail with `code` (an Error with that code, or `err` itself). */
async function syncFailsWith(code: string | Error): Promise<void> {
  const probe = await open(join(tmpdir(), `enrich-probe-${process.pid}`), 'w');
  const proto = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
  await probe.close();
  const err = typeof code === 'string' ? Object.assign(new Error(code), { code }) : code;
  vi.spyOn(proto, 'sync').mockRejectedValue(err);
}

describe('syncDir', () => {
  it.each(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EPERM', 'EBADF'])(
    'a file system that cannot flush a directory (%s): as durable as it makes it, no error',
    async (code) => {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-sync-dir-'));
      await syncFailsWith(code);
      await expect(syncDir(dir)).resolves.toBeUndefined();
    },
  );

  it.each(['EIO', 'ENOSPC'])('a failing disk (%s) is thrown', async (code) => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-sync-dir-'));
    await syncFailsWith(code);
    await expect(syncDir(dir)).rejects.toMatchObject({ code });
  });

  it('an error with no code is thrown (nothing says the file system cannot flush)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-sync-dir-'));
    await syncFailsWith(new Error('odd'));
    await expect(syncDir(dir)).rejects.toThrow('odd');
  });

  it('a directory that is not there: nothing to flush', async () => {
    await expect(
      syncDir(join(tmpdir(), 'enrich-no-such-dir-', String(process.pid))),
    ).resolves.toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('syncDirsDown', () => {
  it('flushes each level from the top down to the directory, and only the directory when it is the top', async () => {
    const top = await mkdtemp(join(tmpdir(), 'enrich-sync-dir-'));
    await mkdir(join(top, 'a', 'b'), { recursive: true });
    const flushed = await watchFlushes();
    await syncDirsDown(top, join(top, 'a', 'b'));
    expect(flushed).toEqual([top, join(top, 'a'), join(top, 'a', 'b')]);
    flushed.length = 0;
    await syncDirsDown(join(top, 'a'), join(top, 'a'));
    expect(flushed).toEqual([join(top, 'a')]);
    // A top that is no ancestor: every level up to the root, and no further.
    flushed.length = 0;
    await syncDirsDown(join(top, 'elsewhere'), join(top, 'a'));
    expect(flushed.at(0)).toBe('/');
    expect(flushed.at(-1)).toBe(join(top, 'a'));
    expect(flushed).toHaveLength(join(top, 'a').split('/').length);
  });
});
