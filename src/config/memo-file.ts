import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../process-alive.js';

/**
 * The small JSON memos of the state directory (`credits.json`, `idempotency.json`): read
 * forgivingly, written whole through a temp file renamed into place, mode 0600 in a 0700
 * directory. A process killed between the write and the rename leaves `<name>.<pid>.tmp`:
 * the next write removes those of processes that are gone, and so does `sweepMemo`, which
 * each command calls as it opens the memo (a resumed run may never write it again).
 */
export function readMemo<T>(path: string): Record<string, T> {
  try {
    const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return data && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, T>)
      : {};
  } catch {
    // Missing or damaged: a memo only saves a lesson or a hint, learnt again next time.
    return {};
  }
}

/** Writes `data` as the memo at `path`; throws on failure (callers decide it is best effort). */
export function writeMemo(path: string, data: unknown): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  removeDeadTemps(dir, basename(path));
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true }); // a full disk must not keep half a memo's worth of it
    throw err;
  }
}

/** Removes the temp files of the memo at `path` that writers killed mid-write left (best effort). */
export function sweepMemo(path: string): void {
  try {
    removeDeadTemps(dirname(path), basename(path));
  } catch {
    // No state directory yet, or one we cannot list: the next write says so, or nothing.
  }
}

function removeDeadTemps(dir: string, name: string): void {
  const pattern = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.tmp$`);
  for (const entry of readdirSync(dir)) {
    const pid = pattern.exec(entry)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !processAlive(Number(pid)))
      rmSync(join(dir, entry), { force: true });
  }
}
