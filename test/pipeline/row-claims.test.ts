import {
  mkdir,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
  appendFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepBatchKeys } from '../../src/pipeline/journal/batch-keys.js';
import { openJournal } from '../../src/pipeline/journal/journal.js';
import { acquireLockDir, identityOf } from '../../src/pipeline/journal/run-lock.js';
import {
  removeFreeRowClaims,
  ROW_CLAIMS_DIR,
  rowClaims,
  SETTLE_POLL_MS,
} from '../../src/pipeline/run/row-claims.js';
import { tempDir } from '../integration/bulk-harness.js';
import { deadPid } from '../helpers/pids.js';

const never = () => false;

/** Two runs' claims in one runs directory (one process: each has its own claims file). */
async function two() {
  const runsDir = await tempDir('enrich-row-claims-');
  const open = () => rowClaims({ runsDir, now: Date.now });
  return { runsDir, dir: join(runsDir, ROW_CLAIMS_DIR), a: open(), b: open() };
}

describe('row claims: one request per row at a time across runs', () => {
  it('of two runs claiming the same rows, the second is told who holds them; once given back they are its', async () => {
    const { a, b } = await two();
    expect([...(await a.claim(['k1', 'k2'])).keys()]).toEqual([]);
    const held = await b.claim(['k2', 'k3']);
    expect([...held.entries()]).toEqual([['k2', { pid: process.pid }]]);
    // k3 was free: b holds it now, and a is told so.
    expect([...(await a.claim(['k3'])).keys()]).toEqual(['k3']);
    await a.release(['k2']);
    expect([...(await b.claim(['k2'])).keys()]).toEqual([]);
    expect([...(await a.claim(['k2'])).keys()]).toEqual(['k2']);
  });

  it("a run's own claims never hold it back, and a forced claim is taken whoever holds the row", async () => {
    const { a, b } = await two();
    await a.claim(['k1']);
    expect((await a.claim(['k1'])).size).toBe(0);
    expect((await b.claim(['k1'], true)).size).toBe(0);
    // Both hold it now: once a gives it back, b still does.
    await a.release(['k1']);
    expect([...(await a.claim(['k1'])).keys()]).toEqual(['k1']);
  });

  it('settle waits until the holder gives the row back, or its answer is in the cache, or the deadline', async () => {
    const { a, b } = await two();
    await a.claim(['k1', 'k2']);
    const t0 = Date.now();
    setTimeout(() => void a.release(['k1', 'k2']), 150);
    expect((await b.settle(['k1', 'k2'], Date.now() + 10_000, never)).size).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);

    await a.claim(['k3']);
    const answered = await b.settle(['k3'], Date.now() + 10_000, (k) => k === 'k3');
    expect(answered.size).toBe(0);
    const t1 = Date.now();
    const late = await b.settle(['k3'], Date.now() + 2 * SETTLE_POLL_MS, never);
    expect([...late.entries()]).toEqual([['k3', { pid: process.pid }]]);
    expect(Date.now() - t1).toBeLessThan(5_000);
  });

  it('settle stops waiting when the run is interrupted', async () => {
    const runsDir = await tempDir('enrich-row-claims-');
    const a = rowClaims({ runsDir, now: Date.now });
    const stop = new AbortController();
    const b = rowClaims({ runsDir, now: Date.now, signal: stop.signal });
    await a.claim(['k1']);
    setTimeout(() => stop.abort(), 50);
    const held = await b.settle(['k1'], Date.now() + 60_000, never);
    expect([...held.keys()]).toEqual(['k1']);
  });

  it('claims of a process that is gone, or of a reused pid, hold nothing and their file is removed', async () => {
    const { dir, a } = await two();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${deadPid()}-dead.claims`), `${deadPid()} \n+k1\n`);
    // Our own pid, started at another time: a reused pid.
    await writeFile(join(dir, `${process.pid}-reused.claims`), `${process.pid} boot 1\n+k2\n`);
    expect(identityOf(process.pid)).not.toBe('boot 1');
    expect((await a.claim(['k1', 'k2'])).size).toBe(0);
    const left = await readdir(dir);
    expect(left.filter((n) => n.endsWith('.claims'))).toHaveLength(1); // a's own
  });

  it('a line still being written holds nothing until it is whole; a file with no first line yet stays', async () => {
    const { dir, a } = await two();
    await mkdir(dir, { recursive: true });
    const other = join(dir, `${process.pid}-other.claims`);
    await writeFile(other, `${process.pid} ${identityOf(process.pid) ?? ''}\n+k1\n+k`);
    expect([...(await a.claim(['k1', 'k2'])).keys()]).toEqual(['k1']);
    await appendFile(other, '3\n');
    expect([...(await a.claim(['k3'])).keys()]).toEqual(['k3']);
    // Read on from where it stopped: the part read before is not joined to the file's start.
    const joined = `k${process.pid} ${identityOf(process.pid) ?? ''}`;
    expect((await a.claim([joined])).size).toBe(0);
    const empty = join(dir, `${process.pid}-new.claims`);
    await writeFile(empty, '');
    await a.claim(['k4']);
    expect(await readdir(dir)).toContain(`${process.pid}-new.claims`);
  });

  it('waits for the lock another run holds, then claims', async () => {
    const { dir, a } = await two();
    const release = await acquireLockDir(join(dir, '.mutex'), 'test');
    setTimeout(() => void release(), 80);
    const t0 = Date.now();
    expect((await a.claim(['k1'])).size).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(70);
  });

  it('claims that cannot be kept are said once, and the rows go unclaimed', async () => {
    const base = await tempDir('enrich-row-claims-');
    const runsDir = join(base, 'a-file');
    await writeFile(runsDir, 'not a directory');
    const told: string[] = [];
    const c = rowClaims({ runsDir, now: Date.now, onUnclaimed: (why) => told.push(why) });
    expect((await c.claim(['k1'])).size).toBe(0);
    expect((await c.claim(['k2'])).size).toBe(0);
    await c.release(['k1']);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/ENOTDIR|not a directory/);
  });

  it('close removes the run’s claims file; a release after it writes nothing', async () => {
    const { dir, a, b } = await two();
    await a.claim(['k1']);
    const file = (await readdir(dir)).find((n) => n.endsWith('.claims')) as string;
    expect(await readFile(join(dir, file), 'utf8')).toMatch(
      new RegExp(`^${process.pid} .*\\n\\+k1\\n$`),
    );
    await a.close();
    await a.release(['k1']);
    // The directory went with the last claims file (the lock's is gone with its release).
    await expect(readdir(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await b.claim(['k1'])).size).toBe(0);
  });

  it('removeFreeRowClaims removes what runs gone left (claims, their lock) and keeps a live run’s', async () => {
    const { runsDir, dir, a } = await two();
    await a.claim(['k1']);
    await writeFile(join(dir, `${deadPid()}-dead.claims`), `${deadPid()} \n+k2\n`);
    await removeFreeRowClaims(runsDir);
    expect((await readdir(dir)).filter((n) => n.endsWith('.claims'))).toHaveLength(1);
    await a.close();
    await mkdir(join(dir, '.mutex'), { recursive: true });
    await writeFile(join(dir, '.mutex', 'lock'), String(deadPid()));
    await removeFreeRowClaims(runsDir);
    expect(await readdir(runsDir)).toEqual([]);
  });

  it('reads a claims file as it grows: later claims hold, given-back ones free, its run named', async () => {
    const { dir, a } = await two();
    await mkdir(dir, { recursive: true });
    const other = join(dir, `${process.pid}-grows.claims`);
    await writeFile(other, `${process.pid}\n=run-27\n+k1\n`); // a pid alone: judged by the pid
    expect([...(await a.claim(['k1'])).entries()]).toEqual([
      ['k1', { pid: process.pid, run: 'run-27' }],
    ]);
    await appendFile(other, '+k2\n-k1\n');
    const held = await a.claim(['k1', 'k2']);
    expect([...held.keys()]).toEqual(['k2']);
    await appendFile(other, '-k2\n+k3\n');
    expect([...(await a.claim(['k2', 'k3'])).keys()]).toEqual(['k3']);
    // Nothing new: what was read stands.
    expect([...(await a.claim(['k3'])).keys()]).toEqual(['k3']);
  });

  it('a claims file that goes (its run ended) holds nothing; other files in the directory are no claims', async () => {
    const { dir, a } = await two();
    await mkdir(dir, { recursive: true });
    const other = join(dir, `${process.pid}-ends.claims`);
    await writeFile(other, `${process.pid} ${identityOf(process.pid) ?? ''}\n+k1\n`);
    await writeFile(join(dir, 'notes.txt'), `${process.pid}\n+k2\n`);
    expect([...(await a.claim(['k1', 'k2'])).keys()]).toEqual(['k1']);
    const { rm } = await import('node:fs/promises');
    await rm(other);
    expect((await a.claim(['k1'])).size).toBe(0);
    expect(await readdir(dir)).toContain('notes.txt');
  });

  it.each(['0', '-3', 'abc', '1.5'])(
    'a claims file naming no process (%s) is stale',
    async (pid) => {
      const { dir, a } = await two();
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `x-${pid}.claims`), `${pid} \n+k1\n`);
      expect((await a.claim(['k1'])).size).toBe(0);
      expect(await readdir(dir)).not.toContain(`x-${pid}.claims`);
    },
  );

  it('settle does not wait when the deadline is nearer than one look', async () => {
    const { a, b } = await two();
    await a.claim(['k1']);
    const t0 = Date.now();
    const held = await b.settle(['k1'], Date.now() + SETTLE_POLL_MS / 2, never);
    expect([...held.keys()]).toEqual(['k1']);
    expect(Date.now() - t0).toBeLessThan(SETTLE_POLL_MS);
  });

  it('a lock held longer than its patience, or a run interrupted while it waits for it, leaves the rows unclaimed, said once', async () => {
    const runsDir = await tempDir('enrich-row-claims-');
    const dir = join(runsDir, ROW_CLAIMS_DIR);
    // Held by a live process (not this one: this one would only wait for itself).
    const { spawn } = await import('node:child_process');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    try {
      await mkdir(join(dir, '.mutex'), { recursive: true });
      await writeFile(join(dir, '.mutex', 'lock'), String(holder.pid));
      const told: string[] = [];
      const c = rowClaims({
        runsDir,
        now: Date.now,
        lockPatienceMs: 150,
        onUnclaimed: (why) => told.push(why),
      });
      expect((await c.claim(['k1'])).size).toBe(0);
      expect((await c.claim(['k2'])).size).toBe(0); // unclaimed from then on: no second wait
      expect(told).toEqual(['the row claims lock stayed held']);
      const stop = new AbortController();
      stop.abort();
      const d = rowClaims({
        runsDir,
        now: Date.now,
        signal: stop.signal,
        onUnclaimed: (w) => told.push(w),
      });
      expect((await d.claim(['k1'])).size).toBe(0);
      expect(told).toHaveLength(2);
      expect((await readdir(dir)).filter((n) => n.endsWith('.claims'))).toEqual([]);
    } finally {
      holder.kill();
    }
  });

  it('removeFreeRowClaims leaves what is no claims file, and a file still being written; no directory is no error', async () => {
    const runsDir = await tempDir('enrich-row-claims-');
    await removeFreeRowClaims(runsDir);
    const dir = join(runsDir, ROW_CLAIMS_DIR);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'notes.txt'), `${deadPid()}\n`);
    await writeFile(join(dir, '1-new.claims'), '');
    await removeFreeRowClaims(runsDir);
    expect((await readdir(dir)).sort()).toEqual(['1-new.claims', 'notes.txt']);
  });
  it('a run never waits for its own claims; rows all held by another run write no claims file', async () => {
    const { dir, a, b } = await two();
    await a.claim(['k1']);
    const t0 = Date.now();
    expect((await a.settle(['k1'], Date.now() + 2_000, never)).size).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect([...(await b.claim(['k1'])).keys()]).toEqual(['k1']);
    expect((await readdir(dir)).filter((n) => n.endsWith('.claims'))).toHaveLength(1); // a's
  });

  it('a run named when its claims are opened is named to those waiting for its rows', async () => {
    const runsDir = await tempDir('enrich-row-claims-');
    const a = rowClaims({ runsDir, run: 'run-a', now: Date.now });
    const b = rowClaims({ runsDir, now: Date.now });
    await a.claim(['k1']);
    expect([...(await b.claim(['k1'])).entries()]).toEqual([
      ['k1', { pid: process.pid, run: 'run-a' }],
    ]);
  });

  it('its claims file names the process by pid and identity, and is private', async () => {
    const { dir, a } = await two();
    await a.claim(['k1']);
    const file = join(dir, (await readdir(dir)).find((n) => n.endsWith('.claims')) as string);
    const identity = identityOf(process.pid);
    expect(identity).toBeTruthy(); // Linux: a reused pid is told apart by it
    expect((await readFile(file, 'utf8')).split('\n')[0]).toBe(`${process.pid} ${identity}`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('a line that is no claim (not +, - or =) changes nothing, not the run it names either', async () => {
    const { dir, a } = await two();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'x.claims'), `${process.pid}\n=run-1\n+k1\n?k1\n#run-2\n`);
    expect([...(await a.claim(['k1'])).entries()]).toEqual([
      ['k1', { pid: process.pid, run: 'run-1' }],
    ]);
  });

  it('claims that cannot be kept with no one to tell: the rows go unclaimed all the same', async () => {
    const base = await tempDir('enrich-row-claims-');
    const runsDir = join(base, 'a-file');
    await writeFile(runsDir, 'not a directory');
    const c = rowClaims({ runsDir, now: Date.now });
    expect((await c.claim(['k1'])).size).toBe(0);
  });

  it('a directory where a claims file would be leaves the rows unclaimed, said once; a link to nothing holds nothing', async () => {
    const { dir } = await two();
    await mkdir(join(dir, 'odd.claims'), { recursive: true });
    const told: string[] = [];
    const runsDir = join(dir, '..');
    const c = rowClaims({ runsDir, now: Date.now, onUnclaimed: (w) => told.push(w) });
    expect((await c.claim(['k1'])).size).toBe(0);
    expect((await c.claim(['k2'])).size).toBe(0);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/EISDIR|directory/);

    const { dir: dir2, a, b } = await two();
    await mkdir(dir2, { recursive: true });
    await symlink(join(dir2, 'nowhere'), join(dir2, 'gone.claims'));
    await a.claim(['k1']);
    expect((await b.claim(['k2'])).size).toBe(0);
    expect([...(await b.claim(['k1'])).keys()]).toEqual(['k1']);
    // removeFreeRowClaims passes over it (nothing to read: no process to judge).
    await removeFreeRowClaims(join(dir2, '..'));
    expect(await readdir(dir2)).toContain('gone.claims');
  });

  it('removeFreeRowClaims: a claims file with an empty first line is stale; the lock a live run holds stays', async () => {
    const runsDir = await tempDir('enrich-row-claims-');
    const dir = join(runsDir, ROW_CLAIMS_DIR);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'blank.claims'), '\n+k1\n');
    const release = await acquireLockDir(join(dir, '.mutex'), 'test');
    try {
      await removeFreeRowClaims(runsDir);
      expect(await readdir(dir)).toEqual(['.mutex']);
    } finally {
      await release();
    }
  });
});

describe('row claims of a run that ended with jobs not downloaded (ended-claims.ts)', () => {
  /** A runs directory with run `r27`, its batch 0 (keys k1, k2) accepted, downloaded when `spooled`. */
  async function endedRun(spooled: boolean) {
    const runsDir = await tempDir('enrich-ended-claims-');
    const j = await openJournal({
      runsDir,
      key: 'r27',
      header: {
        kind: 'contacts',
        input: { path: '/d27.csv', size: 1, sha256: 'a'.repeat(64) },
        options: {},
        command: 'enrich contacts d27.csv',
      },
      restart: false,
      now: () => 1,
    });
    await (
      await keepBatchKeys(j.dir, '0', ['k1', 'k2'])
    )();
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i0' });
    await j.append({
      t: 'accepted',
      batch: '0',
      job: 'job-0',
      url: 'http://x/r/job-0',
      expires: null,
    });
    if (spooled)
      await j.append({
        t: 'spooled',
        batch: '0',
        records: 2,
        credits: 2,
        remaining: 10,
        creditError: false,
      });
    await j.close();
    return { runsDir, dir: join(runsDir, ROW_CLAIMS_DIR) };
  }

  it('a run that ends with its job running keeps its rows claimed by its run, not waited for; a later run is told so', async () => {
    const { runsDir, dir } = await endedRun(false);
    const first = rowClaims({ runsDir, run: 'r27', now: Date.now });
    await first.claim(['k1', 'k2']);
    await first.close();
    // No claims file (its process may exit), but a marker naming its run, with no key in it.
    expect(await readdir(dir)).toEqual(['r27.ended']);
    expect((await readFile(join(dir, 'r27.ended'), 'utf8')).trim()).toBe(String(process.pid));
    const later = rowClaims({ runsDir, run: 'r28', now: Date.now });
    const held = await later.claim(['k1', 'k3']);
    expect([...held.entries()]).toEqual([['k1', { pid: process.pid, run: 'r27', ended: true }]]);
    // Not waited for: its jobs are the waiting run's to settle (settleRuns).
    const t0 = Date.now();
    expect((await later.settle(['k1'], Date.now() + 5_000, never)).size).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1_000);
    // Its own resume is not held back by its own marker.
    const resumed = rowClaims({ runsDir, run: 'r27', now: Date.now });
    expect((await resumed.claim(['k2'])).size).toBe(0);
  });

  it('the claims end once the job is downloaded: the marker goes with them', async () => {
    const { runsDir, dir } = await endedRun(true);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const later = rowClaims({ runsDir, run: 'r28', now: Date.now });
    expect((await later.claim(['k1'])).size).toBe(0);
    expect(await readdir(dir)).not.toContain('r27.ended');
  });

  it('a killed run’s claims file, found by a run claiming rows, leaves those of its jobs not downloaded claimed by its run', async () => {
    const { runsDir, dir } = await endedRun(false);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${deadPid()}-dead.claims`), `${deadPid()} \n=r27\n+k1\n+k9\n`);
    const later = rowClaims({ runsDir, run: 'r28', now: Date.now });
    const held = await later.claim(['k1', 'k2', 'k9']);
    // k9 was claimed, never sent (no batch of it kept): free.
    expect([...held.keys()]).toEqual(['k1', 'k2']);
    expect(held.get('k1')).toEqual({ pid: deadPid(), run: 'r27', ended: true });
    expect(await readdir(dir)).toContain('r27.ended');
    expect((await readdir(dir)).filter((n) => n.endsWith('.claims'))).toHaveLength(1);
  });

  it('a killed run’s claims file leaves its rows claimed by its run; cache clear keeps that marker while its job is not downloaded', async () => {
    const { runsDir, dir } = await endedRun(false);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${deadPid()}-dead.claims`), `${deadPid()} \n=r27\n+k1\n`);
    await removeFreeRowClaims(runsDir);
    expect(await readdir(dir)).toEqual(['r27.ended']);
    // Its run gone (retention): the marker goes too.
    await rm(join(runsDir, 'r27'), { recursive: true });
    await removeFreeRowClaims(runsDir);
    expect(await readdir(runsDir)).toEqual([]);
  });
});
