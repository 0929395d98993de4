import { AsyncLocalStorage } from 'node:async_hooks';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { processAlive } from '../../src/io/stale-temps.js';
import { acquireRunLock } from '../../src/pipeline/journal/run-lock.js';
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
