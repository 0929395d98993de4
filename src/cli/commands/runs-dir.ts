import { opendir } from 'node:fs/promises';
import { EnrichError } from '../../errors.js';

/**
 * For the commands that read or erase the run journals (`jobs list|show|fetch`, `cache prune`,
 * `cache clear`): a FILE_SYSTEM error (exit 2) naming the runs directory when it is there but
 * cannot be read (a file in its place, another user's), rather than "no journaled jobs" or
 * "removed 0 run(s)" (exit 0), which would hide journals, and the contact data they hold, that
 * are still on disk. One not there yet is fine: no run has been made.
 */
export async function checkRunsDir(runsDir: string): Promise<void> {
  try {
    // Opened, not listed: the command lists it next (a large state directory is read once).
    await (await opendir(runsDir)).close();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    const why = code === 'ENOTDIR' ? 'it is not a directory' : ((err as Error).message ?? code);
    throw new EnrichError('FILE_SYSTEM', `cannot read the run journals in ${runsDir}: ${why}`, {
      cause: err,
      location: { file: runsDir },
      hint: 'Point ENRICH_STATE_DIR at the directory your runs use (a directory you can read and write), or move what is at that path.',
    });
  }
}
