import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The last remaining credits the service reported for a profile. */
export interface CreditsMemo {
  remaining_credits?: number;
  remaining_verification_credits?: number;
  /** ISO time of the answer. */
  at: string;
}

function memoPath(stateDir: string): string {
  return join(stateDir, 'credits.json');
}

function readAll(stateDir: string): Record<string, CreditsMemo> {
  try {
    const data: unknown = JSON.parse(readFileSync(memoPath(stateDir), 'utf8'));
    return data && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, CreditsMemo>)
      : {};
  } catch {
    // A missing or damaged memo only loses a hint shown by `auth status`.
    return {};
  }
}

/** The last known credits of `profile`, if any were recorded. */
export function readCreditsMemo(stateDir: string, profile: string): CreditsMemo | undefined {
  return readAll(stateDir)[profile];
}

/** Removes memo temp files of processes that died between write and rename (SIGKILL). */
function removeDeadTemps(stateDir: string): void {
  const prefix = `${basename(memoPath(stateDir))}.`;
  for (const name of readdirSync(stateDir)) {
    const pid = Number(name.slice(prefix.length, -'.tmp'.length));
    if (!name.startsWith(prefix) || !name.endsWith('.tmp') || !Number.isSafeInteger(pid)) continue;
    if (pid === process.pid || isAlive(pid)) continue;
    rmSync(join(stateDir, name), { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Records the remaining credits of the latest answer (best effort: never throws). */
export function writeCreditsMemo(
  stateDir: string,
  profile: string,
  update: Omit<CreditsMemo, 'at'>,
  now: Date = new Date(),
): void {
  try {
    const all = readAll(stateDir);
    all[profile] = { ...all[profile], ...update, at: now.toISOString() };
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const tmp = `${memoPath(stateDir)}.${process.pid}.tmp`;
    removeDeadTemps(stateDir);
    writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, memoPath(stateDir));
  } catch {
    // The memo is a convenience; a read-only state dir must not fail a paid lookup.
  }
}

/** A balance the service reported, as the API client tells it (`onCredits`). */
export interface CreditsSeen {
  kind: 'enrichment' | 'verification';
  remaining: number;
  /** Epoch ms of the answer. */
  at: number;
}

/**
 * The client's `onCredits` for `profile`: every `remaining_credits` any command sees (bulk
 * results included) becomes the memo `enrich auth status` shows, with the answer's time.
 */
export function creditsMemoSink(stateDir: string, profile: string): (seen: CreditsSeen) => void {
  return (seen) => {
    const update =
      seen.kind === 'verification'
        ? { remaining_verification_credits: seen.remaining }
        : { remaining_credits: seen.remaining };
    writeCreditsMemo(stateDir, profile, update, new Date(seen.at));
  };
}
