import { statfsSync } from 'node:fs';

/**
 * Free space under the results cache. lmdb writing to a full disk can end the process
 * (its native writer corrupted the heap in 6 of 33 test runs on Node 24: "corrupted size
 * vs. prev_size"), so the cache stops taking answers while the disk still has room.
 */

/** Below this much free space the cache takes no more answers (a batch of 1,000 is about 1 MB). */
export const MIN_FREE_BYTES = 67_108_864; // 64 MiB

/** Puts between two looks at the free space: a few hundred KB at most, far under the margin. */
export const PUTS_PER_LOOK = 64;

export interface SpaceOptions {
  /** Free bytes below which nothing more is written (default MIN_FREE_BYTES). */
  minFreeBytes?: number;
  /** Free bytes of the file system holding `dir` (default: statfs). */
  freeBytes?: (dir: string) => number;
}

/** Free bytes an unprivileged user may take on the file system holding `dir`; Infinity if unknown. */
export function statfsFree(dir: string): number {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return Infinity;
  }
}

/** Why answers are not written to the cache in `dir`, when its disk is this low; undefined while there is room. */
export function lowSpace(dir: string, o: SpaceOptions): string | undefined {
  const min = o.minFreeBytes ?? MIN_FREE_BYTES;
  const free = (o.freeBytes ?? statfsFree)(dir);
  if (free >= min) return undefined;
  const mb = (n: number) => `${Math.floor(n / 2 ** 20)} MB`;
  return `the disk holding the results cache in ${dir} has ${mb(free)} free (under ${mb(min)}): no more answers are kept in it (those already in it are still used; free some space, or enrich cache clear)`;
}

export interface SpaceWatch {
  /** Before a removal (prune): looks now. */
  toWrite(): boolean;
  /** Before a put: looks every PUTS_PER_LOOK puts. */
  toPut(): boolean;
}

/**
 * Whether the cache in `dir` may still write: a look at the free space before the first put
 * and every PUTS_PER_LOOK puts after it; once low, never again in this process, with one
 * warning.
 */
export function watchSpace(
  dir: string,
  o: SpaceOptions,
  onWarning: (message: string) => void,
): SpaceWatch {
  let low = false;
  let putsSinceLook = PUTS_PER_LOOK;
  const toWrite = (): boolean => {
    if (low) return false;
    putsSinceLook = 0;
    const why = lowSpace(dir, o);
    if (why === undefined) return true;
    low = true;
    onWarning(why);
    return false;
  };
  return {
    toWrite,
    toPut(): boolean {
      if (low) return false;
      if (putsSinceLook < PUTS_PER_LOOK) {
        putsSinceLook++;
        return true;
      }
      const ok = toWrite();
      putsSinceLook++; // this put (after a low look nothing is counted any more)
      return ok;
    },
  };
}
