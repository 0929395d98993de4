import type { CachePolicy } from '../types.js';
import type { RunState } from './journal.js';

/**
 * Whether a run found in the journal is started over rather than resumed: only a finished one
 * (its output written with exit 0: every row settled, no job left to download, nothing a resume
 * would send) whose answers are not wanted again:
 * - under `refresh` (the cache written, not read): every row is to be looked up again;
 * - with a cache read, once the run is as old as the max age: its answers are older than the
 *   cache would serve (`maxAgeMs` 0: always), and a new run takes the younger ones from it.
 * Any other run is resumed, its paid jobs downloaded and its cache decisions kept (a killed,
 * `--no-wait`, timed-out, capped or out-of-credits run). A run that keeps no cache (`--no-cache`;
 * or, but for `refresh`, none could be opened) resumes a finished run too: its journal is its
 * only copy of what was paid for. Journals of earlier builds say no exit code: resumed, as before.
 */
export function startsAfresh(
  found: Pick<RunState, 'header' | 'done'>,
  policy: Pick<CachePolicy, 'read' | 'write' | 'maxAgeMs'>,
  o: { now: number; cache: boolean },
): boolean {
  if (found.done?.exit !== 0 || !policy.write) return false;
  if (!policy.read) return true;
  return o.cache && o.now - found.header.at >= policy.maxAgeMs;
}
