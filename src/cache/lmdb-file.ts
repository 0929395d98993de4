import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The database file of the results cache inside its directory (lmdb adds `-lock`). The name
 * carries the format: a cache written by an earlier format is never read (see LEGACY_FILES).
 */
export const CACHE_FILE = 'results-v2.mdb';

/**
 * Files of earlier formats: `results.mdb` held msgpack answers without shared structures,
 * with the records' request echoes. Its answers are never served; opening the cache removes
 * it (contact data nobody would read any more).
 */
export const LEGACY_FILES = ['results.mdb', 'results.mdb-lock'];

/** Every file the cache may have left in its directory, current and earlier formats. */
export const ALL_CACHE_FILES = [CACHE_FILE, `${CACHE_FILE}-lock`, ...LEGACY_FILES];

/** Removes the files of earlier formats (best effort: a file another process holds open on Windows stays). */
export function removeLegacyFiles(dir: string): void {
  for (const f of LEGACY_FILES) {
    try {
      rmSync(join(dir, f), { force: true });
    } catch {
      // left for `enrich cache clear`
    }
  }
}

const LMDB_MAGIC = 0xbeefc0de;
const META_MAGIC_AT = 24;

/**
 * Refuses a file that is not an LMDB environment before lmdb maps it: the native code trusts
 * the file's meta pages, and a damaged one (garbage, cut short) crashes the process rather
 * than failing. Both meta pages must carry LMDB's magic (page size read from the first).
 */
export function checkMetaPages(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // a new cache
    throw err;
  }
  try {
    const head = Buffer.alloc(64);
    const n = readSync(fd, head, 0, 64, 0);
    if (n === 0) return; // created, never written
    const pageSize = n === 64 ? head.readUInt32LE(48) : 0;
    const second = Buffer.alloc(4);
    const ok =
      n === 64 &&
      head.readUInt32LE(META_MAGIC_AT) === LMDB_MAGIC &&
      pageSize >= 512 &&
      pageSize <= 65536 &&
      readSync(fd, second, 0, 4, pageSize + META_MAGIC_AT) === 4 &&
      second.readUInt32LE(0) === LMDB_MAGIC;
    if (!ok) throw new Error(`${path} is damaged (not an LMDB file)`);
  } finally {
    closeSync(fd);
  }
}
