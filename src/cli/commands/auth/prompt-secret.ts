import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { EnrichError } from '../../../errors.js';

/** Asks for a secret on the terminal (stderr), echoing nothing of what is typed. */
export function promptSecret(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve, reject) => {
    rl.on('SIGINT', () => {
      rl.close();
      process.stderr.write('\n');
      reject(new EnrichError('INTERRUPTED', 'cancelled; nothing was saved'));
    });
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    // The question itself is shown; everything typed after it is not.
    muted = true;
  });
}

/** Reads all of stdin as text, refusing more than `limit` bytes. */
export async function readStdin(limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new EnrichError('USAGE', `stdin: expected an API key, got over ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
