import { createReadStream } from 'node:fs';

/** One line of a file: its text (without the newline) and where it starts, in bytes. */
export interface FileLine {
  text: string;
  start: number;
  /** 1-based. */
  number: number;
}

/** How a read of the log ended: the length of its whole lines, and a torn tail if there was one. */
export interface LogEnd {
  /** Bytes up to the end of the last good line (where a torn tail is cut off). */
  goodBytes: number;
  /** Bytes after that (a line without its newline, or one that does not read). */
  tornBytes: number;
}

/**
 * Streams a file line by line (a log can be larger than the longest string Node can hold), so
 * `onLine` sees each line once. A line `onLine` refuses (throws) is a torn tail when nothing
 * follows it; anywhere else it stops the read with an error naming the line.
 */
export async function readLines(file: string, onLine: (line: FileLine) => void): Promise<LogEnd> {
  let pieces: Buffer[] = [];
  let offset = 0;
  let number = 0;
  let good = 0;
  let bad: { line: FileLine; err: Error } | undefined;
  const take = (buf: Buffer, start: number) => {
    number++;
    if (bad) throw lineError(file, bad.line, bad.err);
    const line = { text: buf.toString('utf8'), start, number };
    try {
      onLine(line);
      good = start + buf.length + 1;
    } catch (err) {
      bad = { line, err: err as Error };
    }
  };
  for await (const chunk of createReadStream(file, {
    highWaterMark: 1 << 20,
  }) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
      pieces.push(chunk.subarray(from, nl));
      const buf = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
      pieces = [];
      take(buf, offset);
      offset += buf.length + 1;
      from = nl + 1;
    }
    if (from < chunk.length) pieces.push(chunk.subarray(from));
  }
  const tail = pieces.reduce((n, p) => n + p.length, 0);
  return { goodBytes: good, tornBytes: offset + tail - good };
}

function lineError(file: string, line: FileLine, err: Error): Error {
  return new Error(`${file} line ${line.number}: ${err.message}`);
}
