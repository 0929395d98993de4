import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * A state directory whose `runs` cannot be read (a file in its place here; another user's
 * directory, EACCES, the same way): the commands that read or erase the run journals say so
 * (FILE_SYSTEM, exit 2, naming it), as the cache commands do for a cache directory that is no
 * directory. They said "no journaled jobs" and "removed 0 run(s)" with exit 0, so a health check
 * or `cache clear` ("no contact data is left") could not tell a broken state dir from an empty one.
 */
describe('run journals that cannot be read', () => {
  it.concurrent.for([
    ['jobs', 'list'],
    ['jobs', 'list', '--json'],
    ['jobs', 'show', 'abcd1234'],
    ['cache', 'prune'],
    ['cache', 'clear'],
  ])('enrich %s %s: exit 2 naming the runs directory', async (args) => {
    const env = await tempEnv();
    await mkdir(env.ENRICH_STATE_DIR!, { recursive: true });
    const runs = join(env.ENRICH_STATE_DIR!, 'runs');
    await writeFile(runs, 'not a directory');
    const r = await runCli(args, { env });
    expect(r.stderr).toContain(`cannot read the run journals in ${runs}: it is not a directory`);
    expect(r.stderr).toContain('[FILE_SYSTEM]');
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    // What was there is left as it was.
    expect(await readFile(runs, 'utf8')).toBe('not a directory');
  });

  it('a state directory with no runs yet is fine: nothing journaled, exit 0', async () => {
    const env = await tempEnv();
    const list = await runCli(['jobs', 'list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
    expect((await runCli(['cache', 'clear'], { env })).code).toBe(0);
  });
});
