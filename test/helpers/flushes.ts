import { readlinkSync } from 'node:fs';
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
