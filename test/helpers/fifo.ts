import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';

/** Makes a FIFO at `path` and starts reading it: resolves with all it received once its writer closes it. */
export function readFifo(path: string): Promise<Buffer> {
  execFileSync('mkfifo', [path]);
  const chunks: Buffer[] = [];
  return new Promise<Buffer>((ok, fail) =>
    createReadStream(path)
      .on('data', (c) => chunks.push(Buffer.from(c)))
      .on('end', () => ok(Buffer.concat(chunks)))
      .on('error', fail),
  );
}
