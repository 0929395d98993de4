import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

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
