import { AsyncLocalStorage } from 'node:async_hooks';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EnrichError } from '../../src/errors.js';
import { processAlive } from '../../src/process-alive.js';
import {
  acquireLockDir,
  acquireRunLock,
  identityOf,
  lockHolder,
  startTicks,
} from '../../src/pipeline/journal/run-lock.js';
import { deadPid } from '../helpers/pids.js';

/**
 * Two contenders in this one test process: each runs in its own async context with its own pid
 * (process.pid reads the contender's), and every fs/promises call it makes, file handle methods
 * included, first awaits `gate.step()`, so the test decides the interleaving, without timers.
 */
const gate = vi.hoisted(() => ({
  step: async (): Promise<void> => {},
  /** A file system without hard links (FAT, some network shares): link() fails with EPERM. */
  noLinks: false,
  /** The lock is there when linked, gone when read: it changes hands every time we look. */
  vanishing: false,
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  type Fn = (...args: unknown[]) => unknown;
  const gated =
    (fn: Fn, self?: object) =>
    async (...args: unknown[]) => {
      await gate.step();
      return fn.apply(self, args);
    };
  const handle = (fh: object) =>
    new Proxy(fh, {
      get: (target, prop) => {
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? gated(v as Fn, target) : v;
      },
    });
  const mocked: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(real)) {
    mocked[name] = typeof v === 'function' && name !== 'constants' ? gated(v as Fn) : v;
  }
  const link = mocked.link as Fn;
  mocked.link = async (...args: unknown[]) => {
    if (gate.noLinks) {
      await gate.step();
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    }
    if (gate.vanishing) throw Object.assign(new Error('EEXIST: file exists'), { code: 'EEXIST' });
    return link(...args);
  };
  const open = real.open as unknown as Fn;
  mocked.open = async (...args: unknown[]) => {
    await gate.step();
    if (gate.vanishing && args[1] === 'r') {
      throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
    }
    return handle((await open(...args)) as object);
  };
  // writeFile opens, then writes: a reader can come in between, so it is two steps here too.
  mocked.writeFile = async (
    file: string,
    data: string,
    options?: { flag?: string; mode?: number },
  ) => {
    const fh = (await (mocked.open as Fn)(file, options?.flag ?? 'w', options?.mode)) as FileHandle;
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
  };
  return { ...mocked, default: mocked };
});

interface Contender {
  pid: number;
  /** Steps left before it stops (undefined: never stops). */
  budget?: number;
  paused?: () => void;
  resume?: Promise<void>;
}
const contender = new AsyncLocalStorage<Contender>();

gate.step = async () => {
  const me = contender.getStore();
  if (me?.budget === undefined) return;
  if (me.budget-- > 0) return;
  me.paused?.();
  await me.resume;
};

const realPid = process.pid;
const pidProperty = Object.getOwnPropertyDescriptor(process, 'pid')!;
beforeAll(() => {
  Object.defineProperty(process, 'pid', {
    configurable: true,
    enumerable: true,
    get: () => contender.getStore()?.pid ?? realPid,
  });
});
afterAll(() => {
  Object.defineProperty(process, 'pid', pidProperty);
});

/** A dead pid other than `not`. */
function anotherDeadPid(not: number): number {
  let pid = not - 1;
  while (processAlive(pid)) pid--;
  return pid;
}

type Outcome = { won: true; release: () => Promise<void> } | { won: false; error: unknown };
const settle = (p: Promise<() => Promise<void>>): Promise<Outcome> =>
  p.then(
    (release) => ({ won: true, release }),
    (error: unknown) => ({ won: false, error }),
  );

/**
 * Runs contender `a` for `k` fs steps, then `b` to its end, then `a` to its end (when `aDies`,
 * `a` never runs again: it was killed there). Returns both outcomes (a's undefined when it died)
 * and whether `a` had finished before its k-th step.
 */
async function race(dir: string, k: number, a: Contender, b: Contender, aDies = false) {
  let release!: () => void;
  const resume = new Promise<void>((ok) => (release = ok));
  const paused = new Promise<'paused'>((ok) => {
    a.budget = k;
    a.paused = () => ok('paused');
    a.resume = aDies ? new Promise<void>(() => {}) : resume;
  });
  const aRun = settle(contender.run(a, () => acquireRunLock(dir, 'enrich contacts in.csv')));
  const aFinished = (await Promise.race([paused, aRun])) !== 'paused';
  const bOut = await settle(contender.run(b, () => acquireRunLock(dir, 'enrich contacts in.csv')));
  release();
  const aOut = aDies && !aFinished ? undefined : await aRun;
  return { aOut, bOut, aFinished };
}

describe('acquireRunLock with two contenders, paused at every step', () => {
  const a = (): Contender => ({ pid: realPid });
  const b = (): Contender => ({ pid: process.ppid }); // alive, and not us
  const cases: [string, (lock: string) => Promise<void>][] = [
    ['no lock yet', async () => {}],
    ['a lock left by a dead process', (lock) => writeFile(lock, String(deadPid()))],
    ['an empty lock (a power cut before its pid reached the disk)', (lock) => writeFile(lock, '')],
    [
      // B then has the dead holder's pid: the file B puts in its place says the same.
      'a lock whose pid is now the second contender (a reused pid)',
      async (lock) => {
        await writeFile(lock, String(process.ppid));
        await writeFile(`${lock}.pid-${process.ppid}`, 'another-boot 1');
      },
    ],
  ];
  it.each(cases)('%s: exactly one of them runs', async (_name, prepare) => {
    let finished = false;
    for (let k = 0; !finished; k++) {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const lock = join(dir, 'lock');
      await prepare(lock);
      const A = a();
      const B = b();
      const { aOut, bOut, aFinished } = await race(dir, k, A, B);
      finished = aFinished;
      const outcomes = [aOut!, bOut];
      const winners = outcomes.filter((o) => o.won);
      expect(winners, `A paused after ${k} steps`).toHaveLength(1);
      const winner = aOut!.won ? A : B;
      const loser = outcomes.find((o) => !o.won) as { error: unknown };
      expect(loser.error, `A paused after ${k} steps`).toMatchObject({
        code: 'RUN_IN_PROGRESS',
        exitCode: 2,
      });
      expect(await readFile(lock, 'utf8'), `A paused after ${k} steps`).toBe(String(winner.pid));
      await (winners[0] as { release: () => Promise<void> }).release();
      expect(await readdir(dir), `A paused after ${k} steps`).toEqual([]);
    }
  });

  it('a contender killed at any step never blocks the next run', async () => {
    const stale = deadPid();
    const killed = anotherDeadPid(stale);
    let finished = false;
    for (let k = 0; !finished; k++) {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const lock = join(dir, 'lock');
      await writeFile(lock, String(stale));
      const { bOut, aFinished } = await race(dir, k, { pid: killed }, { pid: realPid }, true);
      finished = aFinished;
      expect(bOut, `A killed after ${k} steps`).toMatchObject({ won: true });
      expect(await readFile(lock, 'utf8')).toBe(String(realPid));
    }
  });
});

describe('acquireRunLock refused', () => {
  it('names the file to remove in its hint, should the pid in it be another program now: the lock, or a claim on it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    const lock = join(dir, 'lock');
    // A live process that is not this one: what a reused pid looks like.
    await writeFile(lock, String(process.ppid));
    await expect(acquireRunLock(dir, 'enrich contacts in.csv')).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      hint: expect.stringContaining(`if pid ${process.ppid} is not enrich`),
    });
    await expect(acquireRunLock(dir, 'enrich contacts in.csv')).rejects.toMatchObject({
      hint: expect.stringContaining(`remove ${lock})`),
    });
    // A stale lock, claimed by a process that now looks alive.
    await writeFile(lock, String(deadPid()));
    const claim = `${lock}.stale-${statSync(lock, { bigint: true }).ino}`;
    await writeFile(claim, String(process.ppid));
    await expect(acquireRunLock(dir, 'enrich contacts in.csv')).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      hint: expect.stringContaining(`remove ${claim})`),
    });
  });
});

describe('acquireRunLock and reused pids', () => {
  const boot = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const startTicks = (pid: number) => identityOf(pid)!.split(' ')[1]!;

  it('tells a process from a later one with its pid: the boot and the start time', () => {
    expect(identityOf(process.pid)).toMatch(/^[0-9a-f-]{36} \d+$/);
    expect(identityOf(process.pid)).toBe(identityOf(process.pid));
    expect(identityOf(process.ppid)).not.toBe(identityOf(process.pid));
    expect(identityOf(deadPid())).toBeUndefined();
  });

  it.each([
    ['started later than the holder', (pid: number) => `${boot()} ${Number(startTicks(pid)) - 1}`],
    ['in another boot', (pid: number) => `00000000-0000-4000-8000-000000000000 ${startTicks(pid)}`],
  ])(
    'takes over a lock whose live pid belongs to a process %s, and keeps the lock a bare pid',
    async (_name, earlier) => {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const lock = join(dir, 'lock');
      // What a run killed by a power cut leaves when, after the reboot, its pid is another program's.
      await writeFile(lock, String(process.ppid));
      await writeFile(`${lock}.pid-${process.ppid}`, earlier(process.ppid));
      const release = await acquireRunLock(dir, 'enrich contacts in.csv');
      expect(await readFile(lock, 'utf8')).toBe(String(process.pid)); // as earlier builds read it
      expect(await readFile(`${lock}.pid-${process.pid}`, 'utf8')).toBe(identityOf(process.pid));
      expect((await readdir(dir)).sort()).toEqual(['lock', `lock.pid-${process.pid}`]);
      await release();
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it('refuses while the pid is still the process that took the lock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    const lock = join(dir, 'lock');
    await writeFile(lock, String(process.ppid));
    await writeFile(`${lock}.pid-${process.ppid}`, identityOf(process.ppid)!);
    await expect(acquireRunLock(dir, 'enrich contacts in.csv')).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
    // The loser leaves nothing of its own behind.
    expect((await readdir(dir)).sort()).toEqual(['lock', `lock.pid-${process.ppid}`]);
  });
});

describe('acquireRunLock, one step at a time', () => {
  const command = 'enrich contacts in.csv';

  it('a holder that lets go while a newcomer looks: the newcomer runs, or says who held it', async () => {
    let finished = false;
    for (let k = 0; !finished; k++) {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const releaseA = await contender.run({ pid: realPid }, () => acquireRunLock(dir, command));
      let resume!: () => void;
      const B: Contender = { pid: process.ppid, budget: k };
      B.resume = new Promise<void>((ok) => (resume = ok));
      const paused = new Promise<'paused'>((ok) => (B.paused = () => ok('paused')));
      const bRun = settle(contender.run(B, () => acquireRunLock(dir, command)));
      finished = (await Promise.race([paused, bRun])) !== 'paused';
      await releaseA();
      resume();
      const out = await bRun;
      if (out.won) {
        expect(await readFile(join(dir, 'lock'), 'utf8')).toBe(String(process.ppid));
        await out.release();
        expect(await readdir(dir)).toEqual([]);
      } else {
        // It read the lock before it went: refused, naming the holder, never another error.
        expect(out.error, `B paused after ${k} steps`).toMatchObject({
          code: 'RUN_IN_PROGRESS',
          message: expect.stringContaining(`pid ${realPid}`),
        });
      }
    }
  });

  it('gives up, saying so, when the lock changes hands every time it looks', async () => {
    gate.vanishing = true;
    try {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      await expect(acquireRunLock(dir, command)).rejects.toMatchObject({
        code: 'RUN_IN_PROGRESS',
        message: `cannot take the run lock ${join(dir, 'lock')}`,
        hint: 'another enrich process started the same job at the same moment; run again',
      });
      expect(await readdir(dir)).toEqual([]); // its start file is gone too
    } finally {
      gate.vanishing = false;
    }
  });

  it('a claim whose claimant finishes while it is read: looks again, and runs', async () => {
    let finished = false;
    for (let k = 0; !finished; k++) {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const lock = join(dir, 'lock');
      await writeFile(lock, String(deadPid()));
      // Another process claimed the stale lock, and is about to be done with its claim.
      const claim = `${lock}.stale-${statSync(lock, { bigint: true }).ino}`;
      await writeFile(claim, String(process.ppid));
      let resume!: () => void;
      const A: Contender = { pid: realPid, budget: k };
      A.resume = new Promise<void>((ok) => (resume = ok));
      const paused = new Promise<'paused'>((ok) => (A.paused = () => ok('paused')));
      const aRun = settle(contender.run(A, () => acquireRunLock(dir, command)));
      finished = (await Promise.race([paused, aRun])) !== 'paused';
      await rm(claim, { force: true });
      resume();
      const out = await aRun;
      if (out.won) {
        expect(await readFile(lock, 'utf8'), `A paused after ${k} steps`).toBe(String(realPid));
        await out.release();
        expect(await readdir(dir)).toEqual([]);
      } else {
        // It read the claim before it went: the claimant still ran then.
        expect(out.error, `A paused after ${k} steps`).toMatchObject({
          code: 'RUN_IN_PROGRESS',
          hint: expect.stringContaining(`remove ${claim})`),
        });
      }
    }
  });

  it('leaves no file open, taking over stale locks many times', async () => {
    const fds = async () => (await readdir('/proc/self/fd')).length;
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    const before = await fds();
    for (let i = 0; i < 30; i++) {
      await writeFile(join(dir, 'lock'), String(deadPid()));
      const release = await acquireRunLock(dir, command);
      await release();
      // At once: a handle left open is closed only by a garbage collection, some time later.
      expect(await fds(), `after ${i + 1} takeovers`).toBeLessThanOrEqual(before);
    }
  });

  it('works where files cannot be hard-linked: the lock is created in place', async () => {
    gate.noLinks = true;
    try {
      const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
      const release = await acquireRunLock(dir, command);
      expect(await readFile(join(dir, 'lock'), 'utf8')).toBe(String(process.pid));
      const other = contender.run({ pid: process.ppid }, () => acquireRunLock(dir, command));
      await expect(other).rejects.toMatchObject({ code: 'RUN_IN_PROGRESS' });
      await release();
      expect(await readdir(dir)).toEqual([]);
    } finally {
      gate.noLinks = false;
    }
  });

  it('one process running the same job twice at once is refused the second time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    const release = await acquireRunLock(dir, command);
    await expect(acquireRunLock(dir, command)).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      message: 'this process is already running this same job',
      hint: `wait for that run to finish; then run again: ${command}`,
    });
    await release();
    await (
      await acquireRunLock(dir, command)
    )(); // and runs once the first is done
  });

  it('takes over a lock naming its own pid (left by an earlier process with that pid)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    await writeFile(join(dir, 'lock'), String(process.pid));
    const release = await acquireRunLock(dir, command);
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('keeps its files to its user (0600), and lets go even if the lock was removed meanwhile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    const release = await acquireRunLock(dir, command);
    expect((await stat(join(dir, 'lock'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, `lock.pid-${process.pid}`))).mode & 0o777).toBe(0o600);
    await rm(join(dir, 'lock'));
    await rm(join(dir, `lock.pid-${process.pid}`));
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses, naming what to run again, while the holder runs (a start file with a line end too)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-lock-'));
    await writeFile(join(dir, 'lock'), String(process.ppid));
    await writeFile(join(dir, `lock.pid-${process.ppid}`), `${identityOf(process.ppid)}\n`);
    await expect(acquireRunLock(dir, command)).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      message: `another enrich process (pid ${process.ppid}) is running this same job`,
      // Its start file says it is the very process that took the lock: no "if it is not enrich".
      hint: 'wait for it to finish, or stop it; then run again: enrich contacts in.csv',
    });
  });
});

describe('the start time of a process', () => {
  it('is field 22 of its stat line, whatever its command name holds', () => {
    const rest = (start: string) =>
      ['S', ...Array.from({ length: 18 }, (_, i) => String(i + 1)), start, '0', '0'].join(' ');
    expect(startTicks(`1234 (node) ${rest('5551212')}`)).toBe('5551212');
    expect(startTicks(`1234 (a) b (c)) d) ${rest('42')}`)).toBe('42');
    expect(startTicks(`1234 (x) ${rest('abc')}`)).toBeUndefined();
    expect(startTicks(`1234 (x) ${rest('12a')}`)).toBeUndefined();
    expect(startTicks(`1234 (x) ${rest('a12')}`)).toBeUndefined();
    expect(startTicks('1234 (x) S 1 2')).toBeUndefined();
    expect(startTicks('')).toBeUndefined();
  });

  it('is when the process started, counted from the boot', async () => {
    const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
    const child = spawn('sleep', ['5']);
    try {
      await new Promise((ok) => child.once('spawn', ok));
      const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
      const started = Number(identityOf(child.pid!)!.split(' ')[1]) / tick;
      expect(Math.abs(uptime - started)).toBeLessThan(2);
    } finally {
      child.kill();
    }
  });
});

describe('lockHolder', () => {
  it("names the holder's pid for a refusal built on the lock's, or a run in this process", () => {
    const held = (details?: { pid: number }) =>
      new EnrichError('RUN_IN_PROGRESS', 'held', details ? { details } : {});
    expect(lockHolder(held({ pid: 4242 }))).toEqual({
      who: 'another enrich process (pid 4242)',
      details: { pid: 4242 },
    });
    expect(lockHolder(held())).toEqual({ who: 'another run in this process' });
  });
});

describe('acquireLockDir', () => {
  it('a holder killed while it made its lock file left its temp: the next holder removes it, and the directory goes with the release', async () => {
    const root = await mkdtemp(join(tmpdir(), 'enrich-lockdir-'));
    const dir = join(root, 'locked');
    const first = await acquireLockDir(dir, 'test');
    await first();
    // What a SIGKILL between writing the temp and linking it leaves (the pid in its name is gone).
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir);
    const dead = `.lock.${deadPid().toString(16).padStart(8, '0')}0badcafe.tmp`;
    const live = `.lock.${process.pid.toString(16).padStart(8, '0')}0badcafe.tmp`;
    await writeFile(join(dir, dead), '1');
    const release = await acquireLockDir(dir, 'test');
    expect(await readdir(dir)).not.toContain(dead);
    await release();
    expect(await readdir(root)).toEqual([]);
    // A live writer's temp is never touched (the directory stays until it is gone).
    await mkdir(dir);
    await writeFile(join(dir, live), '1');
    await (
      await acquireLockDir(dir, 'test')
    )();
    expect(await readdir(dir)).toEqual([live]);
  });
});
