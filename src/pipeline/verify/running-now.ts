import { join } from 'node:path';
import { EnrichError } from '../../errors.js';
import { earlierRunsOf } from '../journal/journal.js';
import { acquireRunLock } from '../journal/run-lock.js';
import { runningNow } from '../run/earlier-runs.js';

/**
 * Before a verification run sends anything: a run of the same path with the same options and
 * another content (the file grew since it started: overlapping cron runs of a growing list)
 * going on now in another process stops this one (RUN_IN_PROGRESS, exit 2, naming its pid),
 * as the bulk commands' runs do (earlier-runs.ts): the addresses it has not answered yet would
 * be sent, and paid for, twice. Its lock is taken and given back at once; a run that died
 * left nothing in flight (its answers are in the cache and its journal). Reads only the first
 * line of each journal of this kind.
 */
export async function refuseRunOfChangedFile(c: {
  runsDir: string;
  key: string;
  kind: string;
  input: { path: string; sha256: string };
  options: Record<string, unknown>;
  command: string;
}): Promise<void> {
  if (c.input.path === '-') return;
  for (const header of await earlierRunsOf(c.runsDir, c.key, c)) {
    if (header.input.path !== c.input.path) continue;
    try {
      const unlock = await acquireRunLock(join(c.runsDir, header.run), header.command);
      await unlock();
    } catch (err) {
      if (err instanceof EnrichError && err.code === 'RUN_IN_PROGRESS') throw runningNow(c, err);
      // A run directory removed or not ours to write: nothing of it goes on here.
    }
  }
}
