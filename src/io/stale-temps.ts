import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../process-alive.js';

/** Hex width of the pid part of a temp name (Linux pids stay below 2^22, Windows below 2^32). */
const PID_HEX = 8;

/** The longest file name most file systems take, in bytes (ext4, XFS, APFS, NTFS in UTF-16 aside). */
const NAME_MAX = 255;

/** What a temp name adds to its stem: `.`, `.`, the pid and random hex, `.tmp`. */
const TEMP_EXTRA = 2 + PID_HEX + 8 + 4;

/**
 * The part of a temp name that stands for the output's name: the name itself, or, when the
 * temp name would pass NAME_MAX, its first bytes (whole characters) then `~` and 16 hex of its
 * SHA-256: the same for every writer of that name, so a later one still finds its leftovers.
 */
function tempStem(name: string): string {
  const room = NAME_MAX - TEMP_EXTRA;
  const bytes = Buffer.from(name);
  if (bytes.length <= room) return name;
  let end = room - 17;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--; // not inside a character
  return `${bytes.subarray(0, end).toString()}~${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

/**
 * The temp name an output is written under before the rename: `.<name>.<pid hex><random hex>.tmp`.
 * The writer's pid is in the name so a later run can tell a dead writer's leftover from a live
 * one's. A name too long for that keeps its first bytes and a hash of the rest (`tempStem`).
 */
export function tempNameFor(name: string, pid: number, random: string): string {
  return `.${tempStem(name)}.${pid.toString(16).padStart(PID_HEX, '0')}${random}.tmp`;
}

/**
 * Removes temp files of `name` (of any name when omitted) in `dir` left by writers that no longer run (a SIGKILL or
 * power cut between open and rename). Temps of a live process are never touched.
 */
export async function removeStaleTemps(dir: string, name?: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return; // the open that follows reports an unusable directory
  }
  const stem = name === undefined ? undefined : tempStem(name);
  for (const entry of entries) {
    const m = /^\.(.+)\.([0-9a-f]{8})[0-9a-f]{8}\.tmp$/.exec(entry);
    if (!m || (stem !== undefined && m[1] !== stem)) continue;
    const pid = parseInt(m[2] as string, 16);
    if (pid !== process.pid && !processAlive(pid)) await rm(join(dir, entry), { force: true });
  }
}

/** Output temp files this process has open (the bulk output and rejects), until renamed or removed. */
const liveTemps = new Set<string>();

/** Notes a temp file this process writes, so a sudden exit can remove it (`removeLiveTempsSync`). */
export function trackTemp(path: string): () => void {
  liveTemps.add(path);
  return () => void liveTemps.delete(path);
}

/**
 * Removes this process's unfinished output temp files at once, for an exit that cannot wait
 * (a second Ctrl-C): otherwise the `.tmp` stays until the next run to that directory.
 */
export function removeLiveTempsSync(): void {
  for (const path of liveTemps) rmSync(path, { force: true });
  liveTemps.clear();
}
