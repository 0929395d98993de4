import { createReadStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import iconv from 'iconv-lite';

export interface TextStreamOptions {
  encoding: string;
  /** Bytes to skip at the start (the BOM). */
  skipBytes: number;
  /** Physical lines to drop before the text starts (a preamble above the header). */
  skipLines?: number;
}

/** Streams a file as decoded text chunks (iconv-lite: Node's own windows-1252 is wrong for 0x80-0x9F). */
export function openTextStream(filePath: string, options: TextStreamOptions): Readable {
  const highWaterMark = 256 * 1024;
  let text: Readable;
  if (options.encoding === 'utf-8') {
    // Node's own UTF-8 decoder is correct and faster; iconv-lite handles the rest.
    text = createReadStream(filePath, {
      ...(options.skipBytes > 0 ? { start: options.skipBytes } : {}),
      highWaterMark,
      encoding: 'utf8',
    });
  } else {
    const bytes = createReadStream(filePath, {
      ...(options.skipBytes > 0 ? { start: options.skipBytes } : {}),
      highWaterMark,
    });
    const decoder = iconv.decodeStream(options.encoding, {
      stripBOM: false,
    }) as unknown as Transform;
    bytes.on('error', (err) => decoder.destroy(err));
    text = bytes.pipe(decoder);
  }
  if (options.skipLines && options.skipLines > 0) {
    const skipper = skipLinesTransform(options.skipLines);
    text.on('error', (err) => skipper.destroy(err));
    text = text.pipe(skipper);
  }
  return text;
}

/** Drops the first `count` physical lines (CRLF, LF or CR each end one), even when a CRLF is split across chunks. */
export function skipLinesTransform(count: number): Transform {
  let left = count;
  let pendingCr = false;
  return new Transform({
    readableObjectMode: true,
    decodeStrings: false,
    transform(chunk: Buffer | string, _enc, done) {
      let s = typeof chunk === 'string' ? chunk : chunk.toString();
      if (pendingCr && s.startsWith('\n')) s = s.slice(1);
      pendingCr = false;
      let i = 0;
      while (left > 0 && i < s.length) {
        const ch = s[i];
        if (ch === '\n') left--;
        else if (ch === '\r') {
          if (s[i + 1] === '\n') i++;
          else if (i === s.length - 1) pendingCr = true;
          left--;
        }
        i++;
      }
      if (left === 0 && i < s.length) this.push(s.slice(i));
      done();
    },
  });
}
