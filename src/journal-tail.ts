import { open } from 'node:fs/promises';

/**
 * True when a run journal's last line is a `done` event, read from its tail only (a journal of
 * a million lines is not read for it): a run that finished with everything written (exit 0) and
 * was not resumed since. A leaf both the cache's retention and the pipeline read.
 */
export async function endsDone(path: string, size: number): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const len = Math.min(size, 4096);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    const lines = buf.toString('utf8').trimEnd().split('\n');
    const last = lines[lines.length - 1] ?? '';
    return /^\{"t":"done"/.test(last);
  } finally {
    await fh.close();
  }
}
