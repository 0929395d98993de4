import { existsSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  discardNewIfThrows,
  openJournal,
  type Journal,
  type RunState,
} from '../../src/pipeline/journal/journal.js';

// Starting a run over (restart, or a finished run renewed) and discarding a new one, when the
// state directory refuses to let go of the run's files (a directory made read-only, another
// user's): the run stops as FILE_SYSTEM naming its directory, its journal kept, and its lock
// let go (a library caller runs it again in the same process once the directory is mended).

const refused = vi.hoisted(() => ({ on: false }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  return {
    ...real,
    // The run's journal cannot be removed; the lock's files can (the run lock's own business).
    rm: async (path: string, options?: Parameters<typeof real.rm>[1]) => {
      if (refused.on && basename(path) === 'journal.jsonl') {
        throw Object.assign(new Error(`EACCES: permission denied, rm '${path}'`), {
          code: 'EACCES',
        });
      }
      return real.rm(path, options);
    },
  };
});

afterEach(() => {
  refused.on = false;
});

const header = {
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
};
const now = () => 7;

/** A run `k` with one batch sent, finished (exit 0), closed. */
async function finishedRun(): Promise<{ runsDir: string; dir: string; nonce: string }> {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-start-over-'));
  const j = await openJournal({ runsDir, key: 'k', header, restart: false, now });
  await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i0' });
  await j.append({ t: 'done', output: '/data/out.csv', exit: 0 });
  await j.close();
  return { runsDir, dir: j.dir, nonce: j.state.header.nonce };
}

const refusal = (dir: string) => ({
  code: 'FILE_SYSTEM',
  exitCode: 2,
  message: expect.stringMatching(/^cannot write .*: permission denied/),
  location: { file: dir },
  hint: expect.stringContaining('the run journal is kept'),
});

describe('starting a run over', () => {
  it('asks whether to renew a run found on disk only, with its folded state', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-start-over-'));
    const asked: RunState[] = [];
    const renew = (found: RunState) => (asked.push(found), true);
    const fresh = await openJournal({ runsDir, key: 'k', header, restart: false, now, renew });
    await fresh.close();
    expect([asked.length, fresh.resumed]).toEqual([0, false]);
    const found = await finishedRun();
    const again = await openJournal({ ...found, key: 'k', header, restart: false, now, renew });
    await again.close();
    expect(asked.map((s) => [s.header.nonce, s.done?.exit, s.batches.has('0')])).toEqual([
      [found.nonce, 0, true],
    ]);
  });

  it('renews a run it is told to: a new run, nothing of the old one left but the lock', async () => {
    const found = await finishedRun();
    const open = (renew: boolean) =>
      openJournal({ ...found, key: 'k', header, restart: false, now, renew: () => renew });
    const kept = await open(false);
    await kept.close();
    expect([kept.resumed, kept.state.header.nonce, kept.state.batches.size]).toEqual([
      true,
      found.nonce,
      1,
    ]);
    const renewed = await open(true);
    expect(renewed.resumed).toBe(false);
    expect(renewed.state.header.nonce).not.toBe(found.nonce);
    expect([renewed.state.batches.size, renewed.state.done]).toEqual([0, undefined]);
    expect((await readdir(found.dir)).filter((e) => !e.startsWith('lock'))).toEqual([
      'journal.jsonl',
    ]);
    await renewed.close();
    // Its new header is on disk: the next open resumes the new run, not the old one.
    const next = await open(false);
    await next.close();
    expect([next.resumed, next.state.header.nonce]).toEqual([true, renewed.state.header.nonce]);
  });

  for (const how of ['restart', 'renew'] as const) {
    it(`(${how}) a directory that will not be cleared stops the run as FILE_SYSTEM, keeps the journal and lets the lock go`, async () => {
      const found = await finishedRun();
      refused.on = true;
      const err = await openJournal({
        ...found,
        key: 'k',
        header,
        restart: how === 'restart',
        now,
        renew: () => how === 'renew',
      }).catch((e: unknown) => e);
      expect(err).toMatchObject(refusal(found.dir));
      expect(existsSync(join(found.dir, 'lock'))).toBe(false);
      refused.on = false;
      // The same process opens it again (its lock was let go): the run as it was.
      const again = await openJournal({ ...found, key: 'k', header, restart: false, now });
      await again.close();
      expect([again.resumed, again.state.header.nonce]).toEqual([true, found.nonce]);
    });
  }
});

describe('discarding a new run', () => {
  it('that the directory refuses is FILE_SYSTEM naming the run directory', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-start-over-'));
    const j = await openJournal({ runsDir, key: 'k', header, restart: false, now });
    refused.on = true;
    await expect(j.discardNew()).rejects.toMatchObject(refusal(j.dir));
    await j.close();
  });

  it('discardNewIfThrows: the step failed, so the new run is discarded; a failed discard leaves the step’s error the news', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-start-over-'));
    const j = await openJournal({ runsDir, key: 'k', header, restart: false, now });
    const step = new Error('another run writes this output');
    refused.on = true;
    await expect(discardNewIfThrows(j, Promise.reject(step))).rejects.toBe(step);
    refused.on = false;
    expect(await readdir(j.dir)).toContain('journal.jsonl');
    await expect(discardNewIfThrows(j, Promise.reject(step))).rejects.toBe(step);
    expect(await readdir(j.dir)).not.toContain('journal.jsonl');
    await j.close();
  });

  it('discardNewIfThrows: a step that succeeds gives its value and discards nothing', async () => {
    let discarded = 0;
    const journal = { discardNew: () => Promise.resolve(void (discarded += 1)) } as Journal;
    expect(await discardNewIfThrows(journal, Promise.resolve('claimed'))).toBe('claimed');
    expect(discarded).toBe(0);
  });
});
