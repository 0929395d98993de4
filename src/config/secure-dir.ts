import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';

/**
 * Makes sure `dir` exists with mode 0700 and `file` (if it exists) has mode 0600,
 * repairing looser modes. Returns a line per repair. POSIX only: Windows has no modes.
 */
export function secureConfigFiles(dir: string, file: string): string[] {
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
