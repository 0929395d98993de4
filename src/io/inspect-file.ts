import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { EnrichError } from '../errors.js';

export type InputFormat = 'csv' | 'tsv' | 'json' | 'jsonl';

const SAMPLE_BYTES = 64 * 1024;

/** Reads the first 64 KiB of a file (for encoding, format and dialect detection) and its size. */
export async function readSample(
  name: string,
  filePath: string,
): Promise<{ sample: Buffer; size: number }> {
  try {
    const info = await stat(filePath);
    if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    const fh = await open(filePath, 'r');
    try {
      const buf = Buffer.alloc(Math.min(SAMPLE_BYTES, info.size));
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      return { sample: buf.subarray(0, bytesRead), size: info.size };
    } finally {
      await fh.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (err as Error).message;
    throw new EnrichError('INPUT_UNREADABLE', `cannot read ${name}: ${why}`, {
      cause: err,
      location: { file: name },
    });
  }
}

/** Format from the extension, else from the first character (stdin, .txt). */
export function formatOf(name: string, text: string): InputFormat {
  const ext = extname(name).toLowerCase();
  if (ext === '.tsv' || ext === '.tab') return 'tsv';
  if (ext === '.json') return 'json';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  if (ext === '.csv') return 'csv';
  const first = text.replace(/^\uFEFF/, '').trimStart()[0];
  if (first === '[') return 'json';
  if (first === '{') return 'jsonl';
  return 'csv';
}

/** Path, size and streamed SHA-256 of the file (the resume journal's identity of an input). */
export async function fileIdentity(
  filePath: string,
): Promise<{ path: string; size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(filePath) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { path: filePath, size, sha256: hash.digest('hex') };
}
