import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { EnrichError } from '../errors.js';

/** A temporary copy of stdin and the way to remove it. */
export interface Spool {
  filePath: string;
  remove(): Promise<void>;
}

/** Copies a stream to a private temp file so it can be read twice (mapping sample, then the full pass). */
export async function spoolToFile(input: NodeJS.ReadableStream, tmpDir?: string): Promise<Spool> {
  const dir = await mkdtemp(join(tmpDir ?? tmpdir(), 'enrich-stdin-'));
  const filePath = join(dir, 'stdin');
  try {
    await pipeline(input, createWriteStream(filePath, { mode: 0o600 }));
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
    return await spoolToFile(createReadStream(filePath).pipe(createGunzip()), tmpDir);
  } catch (err) {
    throw new EnrichError(
      'INPUT_UNREADABLE',
      `cannot read ${name}: it is not a whole gzip file (${(err as Error).message})`,
      { cause: err, location: { file: name } },
    );
  }
}
