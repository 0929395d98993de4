import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnrichError } from '../../src/errors.js';
import {
  foldEvents,
  journalAccount,
  listRuns,
  openJournal,
  parseJournal,
  peekRun,
  stateOpenError,
  stateWriteError,
  writeAll,
  type JournalEvent,
} from '../../src/pipeline/journal/journal.js';

// What a run's journal promises beyond its events (session 19: mutants of journal.ts that no
// test saw): the account it names, a full or read-only state directory worded as the user's
// to mend, writes that never stop half-way, and the reads that settle and list earlier runs.

describe("a journal's account", () => {
  it('is a fixed hash of the account: runs journaled by an earlier build keep their identity', () => {
    // The value is on disk in every journal's header: changing it would orphan them all.
    expect(journalAccount('acct-1')).toBe(
      createHash('sha256').update('enrich-journal-account\0acct-1').digest('hex').slice(0, 32),
    );
    expect(journalAccount('acct-1')).toMatch(/^[0-9a-f]{32}$/);
    expect(journalAccount('acct-1')).not.toBe(journalAccount('acct-2'));
    expect(journalAccount('acct-1')).not.toContain('acct-1');
  });
});

describe('a refused write under the state directory', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: refused`), { code });

  it('is FILE_SYSTEM (exit 2) naming the file, for every failure of the file system', () => {
    for (const code of [
      'ENOSPC',
      'EDQUOT',
      'EFBIG',
      'EROFS',
      'EACCES',
      'EPERM',
      'ENOENT',
      'ENOTDIR',
      'EISDIR',
      'EIO',
      'EMFILE',
      'ENFILE',
    ]) {
      const err = stateWriteError('/state/runs/k/journal.jsonl', errno(code));
      expect(err, code).toBeInstanceOf(EnrichError);
      expect(err, code).toMatchObject({
        code: 'FILE_SYSTEM',
        exitCode: 2,
        location: { file: '/state/runs/k/journal.jsonl' },
        details: { errno: code },
      });
      expect((err as EnrichError).message, code).toContain('/state/runs/k/journal.jsonl');
      expect((err as EnrichError).hint, code).toMatch(
        /then run the same command again: the run journal is kept, so nothing paid is bought again\.$/,
      );
    }
  });

  it('says to free space when the disk or quota is full, and to make it writable otherwise', () => {
    for (const code of ['ENOSPC', 'EDQUOT'])
      expect((stateWriteError('/s/j', errno(code)) as EnrichError).hint, code).toMatch(
        /^Free some space in the state directory \(ENRICH_STATE_DIR\), then/,
      );
    for (const code of ['EROFS', 'EACCES', 'EFBIG'])
      expect((stateWriteError('/s/j', errno(code)) as EnrichError).hint, code).toMatch(
        /^Make the state directory \(ENRICH_STATE_DIR\) writable again, then/,
      );
  });

  it('passes anything else on as it is: a worded error, a bug (EBADF), no errno at all', () => {
    const worded = new EnrichError('RUN_IN_PROGRESS', 'another run');
    const bug = errno('EBADF');
    const plain = new Error('boom');
    for (const err of [worded, bug, plain, undefined, 'text'])
      expect(stateWriteError('/s/j', err)).toBe(err);
  });
});

describe('a run that cannot be opened under the state directory', () => {
  it('is worded as a failure to write its path, whatever the cause; a worded error as it is', () => {
    const full = stateOpenError('/s/runs/k', Object.assign(new Error('full'), { code: 'ENOSPC' }));
    expect(full).toMatchObject({
      code: 'FILE_SYSTEM',
      hint: expect.stringMatching(/^Free some space/),
    });
    for (const err of [Object.assign(new Error('bad fd'), { code: 'EBADF' }), new Error('odd')]) {
      const e = stateOpenError('/s/runs/k', err);
      expect(e).toBeInstanceOf(EnrichError);
      expect(e.message).toMatch(/^cannot write \/s\/runs\/k: /);
      expect(e.location).toEqual({ file: '/s/runs/k' });
    }
    const worded = new EnrichError('RUN_IN_PROGRESS', 'another run');
    expect(stateOpenError('/s/runs/k', worded)).toBe(worded);
  });
});

describe('writeAll', () => {
  it('writes again what a write left (a disk filling up takes what fits), in order', async () => {
    const got: Buffer[] = [];
    const handle = {
      write: (b: Buffer, offset: number, length: number) => {
        const n = Math.min(3, length);
        got.push(Buffer.from(b.subarray(offset, offset + n)));
        return Promise.resolve({ bytesWritten: n, buffer: b });
      },
    };
    await writeAll(handle as never, '{"t":"submit","é":1}\n');
    expect(Buffer.concat(got).toString('utf8')).toBe('{"t":"submit","é":1}\n');
    expect(got.length).toBe(Math.ceil(Buffer.byteLength('{"t":"submit","é":1}\n') / 3));
  });

  it('a write that takes nothing is ENOSPC (so the run stops as on a full disk), never a loop', async () => {
    let calls = 0;
    const handle = {
      write: (b: Buffer, offset: number, length: number) => {
        calls++;
        return Promise.resolve({ bytesWritten: calls === 1 ? Math.min(4, length) : 0, buffer: b });
      },
    };
    await expect(writeAll(handle as never, 'abcdefgh')).rejects.toMatchObject({
      code: 'ENOSPC',
      message: 'no space left on device, write',
    });
    expect(calls).toBe(2);
    expect(
      stateWriteError('/s/j', await writeAll(handle as never, 'x').catch((e) => e)),
    ).toMatchObject({
      code: 'FILE_SYSTEM',
    });
  });
});

const runHeader = (at: number): JournalEvent => ({
  t: 'run',
  v: 1,
  run: 'k',
  nonce: 'n',
  at,
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 1, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
});
const line = (e: object) => `${JSON.stringify(e)}\n`;

describe('reading journals', () => {
  it('a blank line between events (an editor, a copy) is skipped, not taken for the torn end', () => {
    const text = `${line(runHeader(1))}   \n${line({ t: 'submit', at: 2, batch: '0', first: 0, last: 0, count: 1, idem: 'i' })}`;
    const events = parseJournal(text);
    expect(events.map((e) => e.t)).toEqual(['run', 'submit']);
    expect(foldEvents(events)?.batches.has('0')).toBe(true);
  });

  it('a spooled job that may hold unconfirmed answers keeps that mark when folded (a resume re-reads them), and one that may not has none', () => {
    const spooled = (unsure?: boolean) =>
      foldEvents([
        runHeader(1),
        { t: 'submit', at: 2, batch: '0', first: 0, last: 0, count: 1, idem: 'i' },
        {
          t: 'spooled',
          at: 3,
          batch: '0',
          records: 1,
          credits: 1,
          ...(unsure === undefined ? {} : { unsure }),
        },
      ] as JournalEvent[])?.batches.get('0')?.spooled;
    expect(spooled(true)).toMatchObject({ records: 1, credits: 1, unsure: true });
    expect(spooled(false)).toMatchObject({ unsure: false });
    expect(spooled()).not.toHaveProperty('unsure');
  });

  it('a blank line between events does not cut the journal when the run is resumed', async () => {
    const runs = await mkdtemp(join(tmpdir(), 'enrich-blank-'));
    await mkdir(join(runs, 'k'));
    const submit = { t: 'submit', at: 2, batch: '0', first: 0, last: 0, count: 1, idem: 'i' };
    await writeFile(
      join(runs, 'k', 'journal.jsonl'),
      `${line(runHeader(1))}  \t \n${line(submit)}`,
    );
    const header = runHeader(1) as Extract<JournalEvent, { t: 'run' }>;
    const open = () =>
      openJournal({ runsDir: runs, key: 'k', header, restart: false, now: () => 3 });
    const j = await open();
    await j.append({
      t: 'accepted',
      batch: '0',
      job: 'j1',
      url: 'u',
      expires: '2026-12-01T00:00:00Z',
    } as never);
    await j.close();
    const again = await open();
    try {
      expect(again.state.batches.get('0')).toMatchObject({ count: 1, job: 'j1' });
    } finally {
      await again.close();
    }
  });

  it("peekRun folds a run's journal as it is now, and is undefined for none or a broken one", async () => {
    const runs = await mkdtemp(join(tmpdir(), 'enrich-peek-'));
    await mkdir(join(runs, 'a'));
    await writeFile(
      join(runs, 'a', 'journal.jsonl'),
      line(runHeader(5)) +
        line({ t: 'submit', at: 6, batch: '0', first: 0, last: 9, count: 10, idem: 'i' }) +
        line({
          t: 'accepted',
          at: 7,
          batch: '0',
          job: 'j1',
          url: 'u',
          expires: '2026-12-01T00:00:00Z',
        }),
    );
    const state = await peekRun(runs, 'a');
    expect(state?.header.at).toBe(5);
    expect(state?.batches.get('0')).toMatchObject({ count: 10 });
    expect(await peekRun(runs, 'missing')).toBeUndefined();
    await mkdir(join(runs, 'dir-as-journal', 'journal.jsonl'), { recursive: true });
    expect(await peekRun(runs, 'dir-as-journal')).toBeUndefined();
  });

  it('listRuns puts the newest first by start, and by last change when two started together', async () => {
    // Both ways round, so the order cannot come from the directory's listing order.
    for (const newer of ['twin-a', 'twin-b']) {
      const runs = await mkdtemp(join(tmpdir(), 'enrich-list-'));
      for (const [name, at, mtime] of [
        ['old', 1, 300],
        ['twin-a', 5, newer === 'twin-a' ? 200 : 100],
        ['twin-b', 5, newer === 'twin-b' ? 200 : 100],
      ] as const) {
        await mkdir(join(runs, name));
        const path = join(runs, name, 'journal.jsonl');
        await writeFile(path, line(runHeader(at)));
        await utimes(path, mtime, mtime);
      }
      const older = newer === 'twin-a' ? 'twin-b' : 'twin-a';
      expect((await listRuns(runs)).map((r) => r.key)).toEqual([newer, older, 'old']);
    }
  });
});
