import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { EnrichError } from '../errors.js';
import { formatOfExtension, type FileFormat } from './file-format.js';

export type InputFormat = FileFormat;

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
  const named = formatOfExtension(name);
  if (named) return named;
  const first = text.replace(/^\uFEFF/, '').trimStart()[0];
  if (first === '[') return 'json';
  if (first === '{') return 'jsonl';
  return 'csv';
}

/** What one read of the whole file tells: its identity for the journal, and two facts the sample cannot. */
export interface FileScan {
  path: string;
  size: number;
  sha256: string;
  /**
   * Valid UTF-8 throughout. The 64 KiB sample can look like UTF-8 while a Windows-1252
   * "é" waits further down; decoding that as UTF-8 would silently corrupt it.
   */
  utf8: boolean;
  /** Holds a CR byte (memchr-fast); no CR byte means no CR character in any supported encoding. */
  hasCr: boolean;
}

/**
 * Reads the file once for its size and SHA-256 (the run's identity), whether it is
 * UTF-8 throughout and whether it holds a CR: a large input is read once before its
 * rows, not once per question.
 */
export async function scanFile(filePath: string): Promise<FileScan> {
  const hash = createHash('sha256');
  let size = 0;
  let utf8 = true;
  let hasCr = false;
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(filePath, {
    highWaterMark: 1024 * 1024,
  }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
    if (!hasCr && chunk.includes(13)) hasCr = true;
    if (!utf8) continue;
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const cut = incompleteTail(buf);
    utf8 = isUtf8(buf.subarray(0, buf.length - cut));
    carry = Buffer.from(buf.subarray(buf.length - cut));
  }
  return {
    path: filePath,
    size,
    sha256: hash.digest('hex'),
    utf8: utf8 && carry.length === 0,
    hasCr,
  };
}

/** Bytes at the end of `buf` that start a multi-byte character not finished in it. */
function incompleteTail(buf: Buffer): number {
  for (let back = 1; back <= 3 && back <= buf.length; back++) {
    const b = buf[buf.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead
    if ((b & 0xe0) === 0xc0) return back < 2 ? back : 0;
    if ((b & 0xf0) === 0xe0) return back < 3 ? back : 0;
    if ((b & 0xf8) === 0xf0) return back < 4 ? back : 0;
    return 0;
  }
  return 0;
}
