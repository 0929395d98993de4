// A memory limit for one measured process: a cgroup of its own (v1 `memory` controller, or v2
// with `memory` enabled), joined by the process before node starts. Under the limit the kernel
// takes back page cache (an lmdb file's mapped pages, the output's written pages) before it
// kills anything, so a run that finishes inside N MB needs no more than N MB of memory, and its
// RSS, mapped pages included, never passes N MB. Needs root (or a delegated cgroup); where it
// cannot be set up, `memoryLimit` says why and the bench skips that part.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const V1 = '/sys/fs/cgroup/memory';
const V2 = '/sys/fs/cgroup';

let serial = 0;

/**
 * A cgroup limited to `limitMb`; resolves {wrap, peakMb(), failcnt(), close()} or {unavailable}.
 * `wrap` prefixes a command so that it runs inside the cgroup (a shell joins it, then execs).
 */
export function memoryLimit(limitMb) {
  const bytes = String(Math.round(limitMb * 2 ** 20));
  const name = `enrich-bench-${process.pid}-${serial++}`;
  let layout;
  try {
    if (existsSync(join(V1, 'memory.limit_in_bytes'))) {
      const dir = join(V1, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
      layout = { dir, peak: 'memory.max_usage_in_bytes', failcnt: 'memory.failcnt' };
    } else if (
      readFileSync(join(V2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')
    ) {
      const dir = join(V2, name);
      mkdirSync(dir);
      writeFileSync(join(dir, 'memory.max'), bytes);
      writeFileSync(join(dir, 'memory.swap.max'), '0');
      layout = { dir, peak: 'memory.peak', failcnt: undefined };
    } else {
      return { unavailable: 'no cgroup memory controller here' };
    }
  } catch (err) {
    return { unavailable: `cannot set a memory limit (${err.code ?? err.message})` };
  }
  const read = (f) => Number(readFileSync(join(layout.dir, f), 'utf8').trim());
  return {
    limit_mb: limitMb,
    wrap: ['/bin/sh', '-c', 'echo $$ > "$0" && exec "$@"', join(layout.dir, 'cgroup.procs')],
    /** The most memory the cgroup held (its processes' own memory and the page cache charged to them), MB. */
    peakMb: () => Math.round((read(layout.peak) / 2 ** 20) * 10) / 10,
    /** How often the limit was reached (the kernel then took pages back), where the kernel counts it. */
    failcnt: () => (layout.failcnt ? read(layout.failcnt) : null),
    close() {
      try {
        rmdirSync(layout.dir);
      } catch {
        // still busy (a process left in it): the kernel removes nothing; left for the admin
      }
    },
  };
}
