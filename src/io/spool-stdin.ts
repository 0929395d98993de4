import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { EnrichError } from '../errors.js';
import { processAlive } from '../process-alive.js';

/** A temporary copy of stdin and the way to remove it. */
export interface Spool {
  filePath: string;
  remove(): Promise<void>;
}

const SPOOL_PREFIX = 'enrich-stdin-';

/**
 * A spool directory's name: `enrich-stdin-<pid hex>-<random>`. The owner's pid is in it so a
 * later run can tell a killed run's leftover (the whole input: contact data) from a live one's.
 */
const spoolPrefix = (pid: number) => `${SPOOL_PREFIX}${pid.toString(16).padStart(8, '0')}-`;

/**
 * How old a spool directory of an earlier build (no pid in its name) must be to be taken as
 * left over: no run reads its input for a day.
 */
const LEGACY_SPOOL_AGE_MS = 86_400_000;

/**
 * Removes the spool directories in `dir` (default: the OS temp directory) that processes no
 * longer running left behind (a kill, a power cut: their copy of stdin or of a decompressed
 * input stays otherwise). A copy is never needed after its run: a resumed run reads its input
 * again (the same file, or stdin piped again) into a copy of its own. Only this user's
 * directories are looked at, never a live process's; stops after `budgetMs`. Resolves to how
 * many were removed.
 */
export async function removeStaleSpools(
  dir: string = tmpdir(),
  o: { budgetMs?: number; now?: number } = {},
): Promise<number> {
  const started = Date.now();
  const now = o.now ?? started;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let removed = 0;
  for (const e of entries) {
    if (!e.isDirectory() || !e.name.startsWith(SPOOL_PREFIX)) continue; // never a symlink
    if (o.budgetMs !== undefined && Date.now() - started > o.budgetMs) break;
    const path = join(dir, e.name);
    const m = /^enrich-stdin-([0-9a-f]{8})-/.exec(e.name);
    try {
      const st = await lstat(path);
      if (process.getuid && st.uid !== process.getuid()) continue; // another user's
      if (m) {
        const pid = parseInt(m[1] as string, 16);
        if (pid === process.pid || processAlive(pid)) continue;
      } else if (now - st.mtimeMs < LEGACY_SPOOL_AGE_MS) continue;
      await rm(path, { recursive: true, force: true });
      removed++;
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
  return removed;
}

/** Copies a stream to a private temp file so it can be read twice (mapping sample, then the full pass). */
export async function spoolToFile(
  input: NodeJS.ReadableStream | (() => NodeJS.ReadableStream),
  tmpDir?: string,
): Promise<Spool> {
  await removeStaleSpools(tmpDir, { budgetMs: 100 });
  const dir = await mkdtemp(join(tmpDir ?? tmpdir(), spoolPrefix(process.pid)));
  const filePath = join(dir, 'stdin');
  try {
    // A stream made here, not before the awaits above: one that fails meanwhile (a damaged
    // gzip) would emit its error with no listener yet, and end the process.
    const source = typeof input === 'function' ? input() : input;
    await pipeline(source, createWriteStream(filePath, { mode: 0o600 }));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { filePath, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** True when the file starts with gzip's magic bytes (1F 8B). */
export async function isGzip(filePath: string): Promise<boolean> {
  const fh = await open(filePath, 'r').catch(() => undefined);
  if (!fh) return false; // the reader names what is wrong with the file
  try {
    const head = Buffer.alloc(2);
    // A directory opens but cannot be read (EISDIR): the reader names that too.
    const read = await fh.read(head, 0, 2, 0).catch(() => undefined);
    return read?.bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/** Decompresses a gzip file to a private temp file (node:zlib), read then like any other. */
export async function gunzipToFile(
  name: string,
  filePath: string,
  tmpDir?: string,
): Promise<Spool> {
  try {
    return await spoolToFile(() => createReadStream(filePath).pipe(createGunzip()), tmpDir);
  } catch (err) {
    throw new EnrichError(
      'INPUT_UNREADABLE',
      `cannot read ${name}: it is not a whole gzip file (${(err as Error).message})`,
      { cause: err, location: { file: name } },
    );
  }
}
