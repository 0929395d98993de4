import { chmodSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { CACHE_FILE, LEGACY_FILES } from './lmdb-file.js';

/**
 * The results cache holds every answer a run paid for (contact data): its files are 0600 in a
 * 0700 directory, as the journals and spools are. lmdb creates new files 0600 (its
 * `permissionsMode`, see results-cache.ts); this repairs what an earlier version, or a
 * directory made by someone else (`mkdir -p` under a 022 umask), left readable by others.
 */

/** The cache's files: the current format's (with `-lock` and the marks of unsynced.ts) and the earlier one's. */
function isCacheFile(name: string): boolean {
  return name.startsWith(CACHE_FILE) || LEGACY_FILES.includes(name);
}

/** Removes the group's and others' bits of `path` when it is this user's; a line per repair. */
function tighten(path: string, st: Stats, wanted: number, repairs: string[]): void {
  const mode = st.mode & 0o777;
  if ((mode & 0o077) === 0 || st.uid !== process.getuid?.()) return;
  chmodSync(path, wanted);
  repairs.push(`${path}: mode ${mode.toString(8)} -> ${wanted.toString(8)}`);
}

/**
 * Makes the cache's files in `dir` 0600, and `dir` 0700 when it is the cache's own: this user's,
 * holding nothing but the cache's files. A directory holding anything else (a home or project
 * directory, `/tmp` for root) is the user's to set; the files in it are private all the same.
 * Files and directories of another user are left as they are (a shared cache is theirs to
 * set). Returns a line per repair; throws when a repair fails (the cache is then not used).
 * POSIX only: Windows has no modes.
 */
export function secureCacheFiles(dir: string): string[] {
  const repairs: string[] = [];
  if (process.platform === 'win32') return repairs;
  const names = readdirSync(dir);
  for (const name of names.filter(isCacheFile)) {
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isFile()) tighten(path, st, 0o600, repairs);
  }
  if (names.every(isCacheFile)) tighten(dir, statSync(dir), 0o700, repairs);
  return repairs;
}
