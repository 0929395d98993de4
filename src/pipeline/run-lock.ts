import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EnrichError } from '../errors.js';
import { processAlive } from '../io/stale-temps.js';

/**
 * One run of an input at a time: a `lock` file in the run's directory holds the pid
 * of the process working on it. Two overlapping cron jobs would otherwise poll the
 * same jobs and race to write one output; the second one stops with a clear error.
 * A lock left by a process that died (SIGKILL, power cut) is taken over.
 */
export async function acquireRunLock(dir: string, command: string): Promise<() => Promise<void>> {
  const path = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      await fh.writeFile(String(process.pid));
      await fh.close();
      return () => rm(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (
      Number.isSafeInteger(holder) &&
      holder > 0 &&
      holder !== process.pid &&
      processAlive(holder)
    ) {
      throw new EnrichError(
        'RUN_IN_PROGRESS',
        `another enrich process (pid ${holder}) is running this same job`,
        {
          hint: `wait for it to finish, or stop it; then run again: ${command}`,
        },
      );
    }
    await rm(path, { force: true }); // its holder is gone
  }
  throw new EnrichError('RUN_IN_PROGRESS', `cannot take the run lock ${path}`, {
    hint: 'another enrich process started the same job at the same moment; run again',
  });
}
