import { fstatSync, readlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';

type Flushable = { datasync(): Promise<void>; sync(): Promise<void>; fd: number };

/**
 * Records the path of every file or directory flushed (datasync or sync), in order (Linux: read from
 * `/proc/self/fd`). Undone by `vi.restoreAllMocks()`.
 */
export async function watchFlushes(): Promise<string[]> {
  const probe = await open(join(tmpdir(), `enrich-probe-${process.pid}`), 'w');
  const proto = Object.getPrototypeOf(probe) as Flushable;
  await probe.close();
  const flushed: string[] = [];
  for (const m of ['datasync', 'sync'] as const) {
    const real = proto[m];
    vi.spyOn(proto, m).mockImplementation(function (this: Flushable) {
      flushed.push(readlinkSync(`/proc/self/fd/${this.fd}`));
      return real.call(this);
    });
  }
  return flushed;
}

/** A flush seen by `watchFlushSpans`: the file, its size when the flush began, and whether it ended. */
export interface FlushSpan {
  path: string;
  size: number;
  done: boolean;
}

/**
 * Records every `datasync` or `sync` as it begins (the file's path and size then) and when it ends:
 * whatever the file held when a finished flush began is on the disk. Undone by
 * `vi.restoreAllMocks()`.
 */
export async function watchFlushSpans(): Promise<FlushSpan[]> {
  const probe = await open(join(tmpdir(), `enrich-probe-${process.pid}`), 'w');
  const proto = Object.getPrototypeOf(probe) as Flushable;
  await probe.close();
  const spans: FlushSpan[] = [];
  for (const m of ['datasync', 'sync'] as const) {
    const real = proto[m];
    vi.spyOn(proto, m).mockImplementation(async function (this: Flushable) {
      const span = {
        path: readlinkSync(`/proc/self/fd/${this.fd}`),
        size: fstatSync(this.fd).size,
        done: false,
      };
      spans.push(span);
      await real.call(this);
      span.done = true;
    });
  }
  return spans;
}

/** Whether the first `end` bytes of `path` were on the disk: a flush that began past them ended. */
export const flushedTo = (spans: FlushSpan[], path: string, end: number): boolean =>
  spans.some((s) => s.path === path && s.done && s.size >= end);
