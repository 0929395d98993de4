import { AsyncLocalStorage } from 'node:async_hooks';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { processAlive } from '../../src/io/stale-temps.js';
import { acquireRunLock, identityOf } from '../../src/pipeline/journal/run-lock.js';
import { deadPid } from '../helpers/pids.js';

/**
 * Two contenders in this one test process: each runs in its own async context with its own pid
 * (process.pid reads the contender's), and every fs/promises call it makes, file handle methods
 * included, first awaits `gate.step()`, so the test decides the interleaving, without timers.
 */
const gate = vi.hoisted(() => ({ step: async (): Promise<void> => {} }));

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
  const open = real.open as unknown as Fn;
  mocked.open = async (...args: unknown[]) => {
    await gate.step();
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
