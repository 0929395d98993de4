import { mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimOutput, refuseOutputInUse } from '../../src/pipeline/journal/output-lock.js';
import { acquireRunLock } from '../../src/pipeline/journal/run-lock.js';

/** A runs dir, and a run in it (its lock held) that writes `target` from `input`. */
async function rig() {
  const dir = await mkdtemp(join(tmpdir(), 'enrich-output-lock-'));
  const runsDir = join(dir, 'runs');
  const claim = (key: string, target: string, input: string, at = 1000) =>
    claimOutput({
      runsDir,
      key,
      target,
      input,
      command: `enrich contacts ${input}`,
      as: '--output',
      now: () => at,
    });
  const live = async (key: string, target: string, input: string, at = 1000) => {
    await mkdir(join(runsDir, key), { recursive: true });
    const release = await acquireRunLock(join(runsDir, key), 'enrich contacts');
    await claim(key, target, input, at);
    return release;
  };
  const check = (key: string, target: string) =>
    refuseOutputInUse({ runsDir, key, target, command: 'enrich contacts b', as: '--output' });
  return { dir, runsDir, live, claim, check };
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
    const { dir, live, check } = await rig();
    await symlink(dir, join(dir, 'via-link'));
    await live('run-a', join(dir, 'report.csv'), 'leads-27.csv');
    await expect(check('run-b', join(dir, 'via-link', 'report.csv'))).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
  });

  it('two runs that both passed the first check (started at once): the later claim stops, the earlier goes on', async () => {
    const { dir, runsDir, claim, check } = await rig();
    const report = join(dir, 'report.csv');
    // Both looked before either had noted its output: nothing to see yet.
    await check('run-a', report);
    await check('run-b', report);
    await mkdir(join(runsDir, 'run-a'), { recursive: true });
    await mkdir(join(runsDir, 'run-b'), { recursive: true });
    const releaseA = await acquireRunLock(join(runsDir, 'run-a'), 'enrich contacts a');
    const releaseB = await acquireRunLock(join(runsDir, 'run-b'), 'enrich contacts b');
    await claim('run-a', report, 'leads-27.csv', 1000);
    await claim('run-b', report, 'leads-28.csv', 1001).then(
      () => expect.unreachable('the later claim must stop'),
      (err: unknown) =>
        expect(err).toMatchObject({
          code: 'RUN_IN_PROGRESS',
          message: expect.stringMatching(/report\.csv from leads-27\.csv: nothing was sent/),
        }),
    );
    // The earlier claim, made again, still goes on: the later one never stops it.
    await claim('run-a', report, 'leads-27.csv', 1000);
    // The same moment: the smaller run key goes first, the other stops.
    await claim('run-b', report, 'leads-28.csv', 1000).then(
      () => expect.unreachable('the tie must go to run-a'),
      (err: unknown) => expect(err).toMatchObject({ code: 'RUN_IN_PROGRESS' }),
    );
    await releaseA();
    await claim('run-b', report, 'leads-28.csv', 1001); // run-a ended: run-b writes it now
    await releaseB();
  });
});
