import { mkdir, mkdtemp, readdir, stat, symlink, writeFile } from 'node:fs/promises';
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

  it('a note that is no JSON or misses its output or input (a damaged one) guards nothing', async () => {
    const { dir, runsDir, check } = await rig();
    const report = join(dir, 'report.csv');
    const notes = [
      'not json {',
      JSON.stringify({ output: report }),
      JSON.stringify({ input: 'a.csv' }),
      JSON.stringify({ output: report, input: 7 }),
    ];
    for (const [i, note] of notes.entries()) {
      await mkdir(join(runsDir, `run-${i}`), { recursive: true });
      await acquireRunLock(join(runsDir, `run-${i}`), 'enrich contacts a.csv');
      await writeFile(join(runsDir, `run-${i}`, 'output.json'), note);
    }
    await check('run-b', report);
  });

  it('a note without its time (an earlier build) or with one that is no number: that run started first', async () => {
    const { dir, runsDir, claim } = await rig();
    const report = join(dir, 'report.csv');
    for (const at of [undefined, 'soon']) {
      const key = `old-${String(at)}`;
      await mkdir(join(runsDir, key), { recursive: true });
      const release = await acquireRunLock(join(runsDir, key), 'enrich contacts a.csv');
      await writeFile(
        join(runsDir, key, 'output.json'),
        JSON.stringify({ output: report, input: 'a.csv', at }),
      );
      await mkdir(join(runsDir, 'run-b'), { recursive: true });
      await expect(claim('run-b', report, 'b.csv', 0)).rejects.toMatchObject({
        code: 'RUN_IN_PROGRESS',
        message: expect.stringMatching(/report\.csv from a\.csv/),
      });
      await release();
    }
  });

  it("names stdin as the other run's input", async () => {
    const { dir, live, check } = await rig();
    await live('run-a', join(dir, 'report.csv'), '-');
    await expect(check('run-b', join(dir, 'report.csv'))).rejects.toMatchObject({
      message: expect.stringMatching(/report\.csv from stdin: nothing was sent/),
    });
  });

  it('a run whose lock cannot be looked at (an error, not a live run) stops nothing', async () => {
    const { dir, runsDir, check } = await rig();
    const report = join(dir, 'report.csv');
    await mkdir(join(runsDir, 'odd', 'lock'), { recursive: true }); // a directory: EISDIR
    await writeFile(
      join(runsDir, 'odd', 'output.json'),
      JSON.stringify({ output: report, input: 'a.csv', at: 1 }),
    );
    await check('run-b', report);
  });

  it('a claim whose note cannot be written, or whose output cannot be checked, stops nothing and notes nothing', async () => {
    const { dir, runsDir, live, claim } = await rig();
    const report = join(dir, 'report.csv');
    await live('run-a', report, 'a.csv', 1000);
    // run-b has no directory: its note is not written, so its output goes unguarded.
    await claim('run-b', report, 'b.csv', 2000);
    expect(await readdir(runsDir)).toEqual(['run-a']);
    // An output in a missing directory (the writer refuses it later), and stdout: no note.
    await mkdir(join(runsDir, 'run-c'));
    await claim('run-c', join(dir, 'missing', 'report.csv'), 'c.csv', 2000);
    await claim('run-c', '-', 'c.csv', 2000);
    expect(await readdir(join(runsDir, 'run-c'))).toEqual([]);
  });

  it('the claim noted first goes on even when the later one has the smaller key; the note is private (0600)', async () => {
    const { dir, runsDir, live, claim } = await rig();
    const report = join(dir, 'report.csv');
    const releaseA = await live('run-a', report, 'a.csv', 1001); // smaller key, later claim
    await mkdir(join(runsDir, 'run-b'));
    await claim('run-b', report, 'b.csv', 1000);
    expect((await stat(join(runsDir, 'run-b', 'output.json'))).mode & 0o777).toBe(0o600);
    await releaseA();
  });

  it("names another process's pid (in the error's details) when that process holds the run", async () => {
    const { dir, runsDir, check } = await rig();
    const report = join(dir, 'report.csv');
    await mkdir(join(runsDir, 'elsewhere'), { recursive: true });
    // A live process that is not this one (no start file beside it: its pid alone decides).
    await writeFile(join(runsDir, 'elsewhere', 'lock'), String(process.ppid));
    await writeFile(
      join(runsDir, 'elsewhere', 'output.json'),
      JSON.stringify({ output: report, input: 'a.csv', at: 1 }),
    );
    await expect(check('run-b', report)).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      details: { pid: process.ppid },
      message: expect.stringMatching(
        new RegExp(`^another enrich process \\(pid ${process.ppid}\\) is writing`),
      ),
    });
  });
});
