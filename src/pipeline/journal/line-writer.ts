import type { FileHandle } from 'node:fs/promises';

/** Appends lines to a file in order, never interleaved; see `openLineWriter`. */
export interface LineWriter {
  /** Resolves once `line` is written (and, when `durable`, on the disk). */
  write(line: string, durable: boolean): Promise<void>;
  /** Resolves once every line asked for is written (or failed). */
  settled(): Promise<void>;
}

interface Waiting {
  line: string;
  durable: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit: lines asked for while a write is under way go out together in the next
 * write (one datasync when any of them must be durable). A run of single requests journals
 * two lines per request; one write each, chained, held every request behind the file
 * system's round trip. Once a write fails, every later line fails with the same error.
 */
export function openLineWriter(handle: FileHandle): LineWriter {
  let queue: Waiting[] = [];
  let running: Promise<void> | undefined;
  let failure: { err: unknown } | undefined;
  const pump = async () => {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        // Awaited, so pump never ends within the call that started it.
        if (failure) await Promise.reject(failure.err);
        await handle.write(batch.map((w) => w.line).join(''));
        if (batch.some((w) => w.durable)) await handle.datasync();
        for (const w of batch) w.resolve();
      } catch (err) {
        failure ??= { err };
        for (const w of batch) w.reject(err);
      }
    }
    running = undefined;
  };
  return {
    write(line, durable) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ line, durable, resolve, reject });
        running ??= pump();
      });
    },
    settled: () => running ?? Promise.resolve(),
  };
}
