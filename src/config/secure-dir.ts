import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { EnrichError } from '../errors.js';

/**
 * Makes sure `dir` exists with mode 0700 and `file` (if it exists) has mode 0600,
 * repairing looser modes. Returns a line per repair. POSIX only: Windows has no modes.
 * A directory that cannot be made or repaired (a file in its place, a read-only file system)
 * is a FILE_SYSTEM error naming it, never an internal one.
 */
export function secureConfigFiles(dir: string, file: string): string[] {
  try {
    return secure(dir, file);
  } catch (err) {
    if (err instanceof EnrichError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST'
        ? `${dir} is not a directory`
        : code === 'ENOTDIR'
          ? `a part of the path ${dir} is not a directory`
          : (err as Error).message;
    throw new EnrichError('FILE_SYSTEM', `the config directory cannot be used: ${why}`, {
      location: { file: dir },
      cause: err,
      hint: `Set ENRICH_CONFIG_DIR to a directory of your own, or move what is at ${dir}.`,
    });
  }
}

function secure(dir: string, file: string): string[] {
  const repairs: string[] = [];
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return repairs;
  const dirMode = statSync(dir).mode & 0o777;
  if (dirMode !== 0o700) {
    chmodSync(dir, 0o700);
    repairs.push(`${dir}: mode ${dirMode.toString(8)} -> 700`);
  }
  if (existsSync(file)) {
    const fileMode = statSync(file).mode & 0o777;
    if (fileMode !== 0o600) {
      chmodSync(file, 0o600);
      repairs.push(`${file}: mode ${fileMode.toString(8)} -> 600`);
    }
  }
  return repairs;
}
