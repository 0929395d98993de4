import { mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteOutput, refuseOutputInUse } from '../../src/pipeline/journal/output-lock.js';
import { acquireRunLock } from '../../src/pipeline/journal/run-lock.js';

/** A runs dir, and a run in it (its lock held) that writes `target` from `input`. */
async function rig() {
  const dir = await mkdtemp(join(tmpdir(), 'enrich-output-lock-'));
  const runsDir = join(dir, 'runs');
  const live = async (key: string, target: string, input: string) => {
    await mkdir(join(runsDir, key), { recursive: true });
    const release = await acquireRunLock(join(runsDir, key), 'enrich contacts');
    await noteOutput(join(runsDir, key), target, input);
    return release;
  };
  const check = (key: string, target: string) =>
    refuseOutputInUse({ runsDir, key, target, command: 'enrich contacts b', as: '--output' });
  return { dir, live, check };
}

describe('refuseOutputInUse: one live run per output file', () => {
  it('refuses a run writing the file a live run of another input writes, naming it; not once that run ended', async () => {
    const { dir, live, check } = await rig();
    const release = await live('run-a', join(dir, 'report.csv'), 'leads-27.csv');
    await expect(check('run-b', join(dir, '.', 'report.csv'))).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      exitCode: 2,
      message: expect.stringMatching(
        /^another run in this process is writing .*report\.csv from leads-27\.csv: nothing was sent/,
      ),
      hint: expect.stringMatching(/--output another file/),
    });
    await check('run-b', join(dir, 'other.csv')); // another file: free
    await check('run-a', join(dir, 'report.csv')); // the same run: left to its run lock
    await release();
    await check('run-b', join(dir, 'report.csv'));
  });

  it('never guards stdout, devices and pipes (nothing is replaced there)', async () => {
    const { live, check } = await rig();
    await live('run-a', '/dev/null', 'a.csv');
    await live('run-c', '-', 'c.csv');
    await check('run-b', '/dev/null');
    await check('run-b', '-');
  });

  it('a directory reached through a symlink is the same output file', async () => {
    // Regression: -o link-to-dir/report.csv read as another file than -o report.csv: both runs
    // paid, and the last rename won.
    const { dir, live, check } = await rig();
    await symlink(dir, join(dir, 'via-link'));
    await live('run-a', join(dir, 'report.csv'), 'leads-27.csv');
    await expect(check('run-b', join(dir, 'via-link', 'report.csv'))).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
  });
});
