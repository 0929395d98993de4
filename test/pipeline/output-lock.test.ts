import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claimOutput,
  outputLockDir,
  refuseOutputInUse,
} from '../../src/pipeline/journal/output-lock.js';

/** A runs dir; `claim` takes an output's lock as a run does (its release), `check` only looks. */
async function rig() {
  const dir = realpathSync(await mkdtemp(join(tmpdir(), 'enrich-output-lock-')));
  const runsDir = join(dir, 'runs');
  await mkdir(runsDir);
  const claim = (key: string, target: string, input: string) =>
    claimOutput({ runsDir, key, target, input, command: `enrich contacts ${input}`, as: '-o' });
  const check = (key: string, target: string) =>
    refuseOutputInUse({ runsDir, key, target, command: 'enrich contacts b', as: '--output' });
  const lockDir = (file: string) => outputLockDir(runsDir, file);
  return { dir, runsDir, claim, check, lockDir };
}

const refused = (pattern: RegExp) =>
  expect.objectContaining({
    code: 'RUN_IN_PROGRESS',
    exitCode: 2,
    message: expect.stringMatching(pattern),
  });

describe('one live run per output file', () => {
  it('refuses a run writing the file a live run of another input writes, naming it; not once that run ended', async () => {
    const { dir, claim, check } = await rig();
    const release = await claim('run-a', join(dir, 'report.csv'), 'leads-27.csv');
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

  it('never guards stdout, devices and pipes (nothing is replaced there), and makes no lock for them', async () => {
    const { runsDir, claim, check } = await rig();
    await claim('run-a', '/dev/null', 'a.csv');
    await claim('run-c', '-', 'c.csv');
    await check('run-b', '/dev/null');
    await check('run-b', '-');
    await claim('run-b', '/dev/null', 'b.csv');
    expect(await readdir(runsDir)).toEqual([]);
  });

  it('a directory reached through a symlink is the same output file', async () => {
    const { dir, claim, check } = await rig();
    await symlink(dir, join(dir, 'via-link'));
    await claim('run-a', join(dir, 'report.csv'), 'leads-27.csv');
    await expect(check('run-b', join(dir, 'via-link', 'report.csv'))).rejects.toEqual(
      refused(/report\.csv from leads-27\.csv/),
    );
    await expect(claim('run-b', join(dir, 'via-link', 'report.csv'), 'b.csv')).rejects.toEqual(
      refused(/report\.csv from leads-27\.csv/),
    );
  });

  it('runs that all passed the first check (started at once): exactly one takes the output, whatever their order or clock', async () => {
    const { dir, claim, check } = await rig();
    const report = join(dir, 'report.csv');
    // All looked before any had claimed: nothing to see yet.
    for (const k of ['run-a', 'run-b', 'run-c']) await check(k, report);
    // Claimed at the same moment (a note ordered by time tied here: both went on).
    const claims = await Promise.allSettled(
      ['run-c', 'run-a', 'run-b'].map((k) => claim(k, report, `${k}.csv`)),
    );
    const took = claims.filter((c) => c.status === 'fulfilled');
    const lost = claims.flatMap((c) => (c.status === 'rejected' ? [c.reason as unknown] : []));
    expect(took).toHaveLength(1);
    expect(lost).toEqual([refused(/is writing/), refused(/is writing/)]);
    // The losers were told which input the winner writes from (or its pid alone, when they
    // looked before its note was written): never another loser's.
    const winner = claims.findIndex((c) => c.status === 'fulfilled');
    const winnerInput = `${['run-c', 'run-a', 'run-b'][winner] as string}.csv`;
    for (const err of lost)
      expect((err as Error).message).not.toMatch(
        new RegExp(`from (?!${winnerInput.replace('.', '\\.')})`),
      );
    // Once it ends, another run writes the file.
    await (took[0] as PromiseFulfilledResult<() => Promise<void>>).value();
    const next = await claim('run-b', report, 'run-b.csv');
    await next();
  });

  it('the lock directory is private (0700), its note 0600; a release leaves nothing behind', async () => {
    const { dir, runsDir, claim, lockDir } = await rig();
    const report = join(dir, 'report.csv');
    const release = await claim('run-a', report, 'a.csv');
    expect((await stat(lockDir(report))).mode & 0o777).toBe(0o700);
    expect((await stat(join(lockDir(report), 'holder.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(lockDir(report), 'holder.json'), 'utf8'))).toEqual({
      pid: process.pid,
      key: 'run-a',
      input: 'a.csv',
    });
    await release();
    // Nothing is left (a directory per output file ever written would pile up).
    expect(await readdir(runsDir)).toEqual([]);
  });

  it('a release leaves a lock directory another run holds; a claim racing the removal of its directory still ends holding the lock', async () => {
    const { dir, runsDir, claim, lockDir } = await rig();
    const report = join(dir, 'report.csv');
    const other = join(dir, 'other.csv');
    const releaseOther = await claim('run-b', other, 'b.csv');
    const release = await claim('run-a', report, 'a.csv');
    await release();
    expect(await readdir(join(runsDir, '.outputs'))).toEqual([basename(lockDir(other))]);
    await releaseOther();
    expect(await readdir(runsDir)).toEqual([]);
    // Removed while this claim makes it (another run's release): made again if need be.
    const mkdirDone = claim('run-c', report, 'c.csv');
    await rm(join(runsDir, '.outputs'), { recursive: true, force: true }).catch(() => undefined);
    const releaseC = await mkdirDone;
    expect(await readdir(lockDir(report))).toContain('lock');
    await releaseC();
  });

  it('a holder note that is damaged or names another pid: the refusal names the holder by its pid alone', async () => {
    const { dir, claim, check, lockDir } = await rig();
    const report = join(dir, 'report.csv');
    await claim('run-a', report, 'a.csv');
    const notes = [
      'not json {',
      JSON.stringify({ pid: process.pid, key: 'run-a' }),
      JSON.stringify({ pid: process.pid, input: 'a.csv' }),
      JSON.stringify({ pid: process.pid + 1, key: 'run-a', input: 'a.csv' }),
    ];
    for (const note of notes) {
      await writeFile(join(lockDir(report), 'holder.json'), note);
      await expect(check('run-b', report)).rejects.toEqual(
        refused(/^another run in this process is writing \S*report\.csv: nothing was sent/),
      );
      // A damaged note is no evidence of this same run either: even its own key is refused.
      await expect(check('run-a', report)).rejects.toEqual(refused(/is writing/));
    }
  });

  it("names stdin as the other run's input", async () => {
    const { dir, claim, check } = await rig();
    await claim('run-a', join(dir, 'report.csv'), '-');
    await expect(check('run-b', join(dir, 'report.csv'))).rejects.toEqual(
      refused(/report\.csv from stdin: nothing was sent/),
    );
  });

  it('a lock that cannot be looked at (an error, not a live run), or left by a process gone, stops nothing', async () => {
    const { dir, claim, check, lockDir } = await rig();
    const report = join(dir, 'report.csv');
    await mkdir(join(lockDir(report), 'lock'), { recursive: true }); // a directory: EISDIR
    await check('run-b', report);
    const other = join(dir, 'other.csv');
    await mkdir(lockDir(other), { recursive: true });
    await writeFile(join(lockDir(other), 'lock'), '999999999'); // no such process
    await check('run-b', other);
    const release = await claim('run-b', other, 'b.csv'); // taken over
    await release();
  });

  it('a claim whose lock cannot be made, or whose output cannot be checked, stops nothing', async () => {
    const { dir, runsDir, claim } = await rig();
    // The runs directory is a file: no lock directory can be made there.
    const blocked = join(dir, 'runs-file');
    await writeFile(blocked, '');
    const release = await claimOutput({
      runsDir: blocked,
      key: 'run-a',
      target: join(dir, 'report.csv'),
      input: 'a.csv',
      command: 'enrich contacts a.csv',
      as: '-o',
    });
    await release();
    // An output in a missing directory (the writer refuses it later): no lock.
    await claim('run-c', join(dir, 'missing', 'report.csv'), 'c.csv');
    expect(await readdir(runsDir)).toEqual([]);
  });

  it("names another process's pid (in the error's details) when that process holds the output", async () => {
    const { dir, check, claim, lockDir } = await rig();
    const report = join(dir, 'report.csv');
    await mkdir(lockDir(report), { recursive: true });
    // A live process that is not this one (no start file beside it: its pid alone decides).
    await writeFile(join(lockDir(report), 'lock'), String(process.ppid));
    await writeFile(
      join(lockDir(report), 'holder.json'),
      JSON.stringify({ pid: process.ppid, key: 'run-a', input: 'a.csv' }),
    );
    const byPid = {
      code: 'RUN_IN_PROGRESS',
      details: { pid: process.ppid },
      message: expect.stringMatching(
        new RegExp(
          `^another enrich process \\(pid ${process.ppid}\\) is writing .*report\\.csv from a\\.csv`,
        ),
      ),
    };
    await expect(check('run-b', report)).rejects.toMatchObject(byPid);
    await expect(claim('run-b', report, 'b.csv')).rejects.toMatchObject(byPid);
  });
});
