import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  earlierRunsOf,
  foldEvents,
  hasJournal,
  listRuns,
  openJournal,
  parseJournal,
  peekRun,
  runKey,
  runsMatching,
  type JournalEvent,
} from '../../src/pipeline/journal/journal.js';

// Reading a journal back (issue 21: survivors of journal.ts's first mutation run). A journal
// misread is a batch paid for and forgotten, or sent twice.

const header = {
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
};
const now = () => 5;
const runsDir = () => mkdtemp(join(tmpdir(), 'enrich-journal-fold-'));
const runLine = JSON.stringify({ t: 'run', v: 1, run: 'k', nonce: 'n', at: 1, ...header });
const submitLine = (batch: string) =>
  JSON.stringify({ t: 'submit', batch, first: 0, last: 0, count: 1, idem: `i${batch}`, at: 2 });

describe('reading a journal back', () => {
  it('runKey is 32 hex digits', () => {
    expect(runKey('contacts', header.input, {})).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a blank line in the middle loses nothing; a damaged line is skipped, not the events after it', () => {
    expect(parseJournal(`${runLine}\n\n${submitLine('0')}\n`).map((e) => e.t)).toEqual([
      'run',
      'submit',
    ]);
    // Session 25: a listing stopped at the damage and said "no journaled jobs" of a run whose
    // accepted jobs came after it (the run itself refuses such a journal: JOURNAL_DAMAGED).
    expect(parseJournal(`${runLine}\n{"t":"sub\n${submitLine('1')}\n`).map((e) => e.t)).toEqual([
      'run',
      'submit',
    ]);
    expect(parseJournal(`${runLine}\n${submitLine('1')}\n{"t":"acc`).map((e) => e.t)).toEqual([
      'run',
      'submit',
    ]);
  });

  it('a line that is JSON but no event (damage that parses, an edit) is damage like any other, never an event', async () => {
    // It was taken for an event: folding it threw a TypeError, so a new run of any file crashed
    // peeking at this one, `jobs list` left the run out, and resuming it was an internal error.
    for (const junk of ['null', '5', '"x"', '[1]', '{}', '{"t":1}']) {
      const text = `${runLine}\n${junk}\n${submitLine('0')}\n`;
      expect(parseJournal(text).map((e) => e.t)).toEqual(['run', 'submit']);
      const dir = await runsDir();
      await mkdir(join(dir, 'k'));
      const path = join(dir, 'k', 'journal.jsonl');
      await writeFile(path, text);
      expect((await peekRun(dir, 'k'))?.batches.has('0')).toBe(true);
      expect((await listRuns(dir)).map((r) => r.key)).toEqual(['k']);
      await expect(
        openJournal({ runsDir: dir, key: 'k', header, restart: false, now }),
      ).rejects.toMatchObject({ code: 'JOURNAL_DAMAGED', location: { file: path, line: 2 } });
      // As the last line, it is a torn end: cut, and the run resumed.
      await writeFile(path, `${runLine}\n${submitLine('0')}\n${junk}`);
      const j = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
      await j.close();
      expect(j.resumed).toBe(true);
      expect(await readFile(path, 'utf8')).toBe(`${runLine}\n${submitLine('0')}\n`);
    }
  });

  it('folds the verification events of verify-emails into one table, the last word on an address winning', () => {
    const lines = [
      runLine,
      JSON.stringify({ t: 'vsend', addr: 'a@x.io', at: 2 }),
      JSON.stringify({ t: 'vsend', addr: 'b@x.io', at: 2 }),
      JSON.stringify({
        t: 'vanswer',
        addr: 'a@x.io',
        status: 'valid',
        charged: true,
        remaining: 9,
        at: 3,
      }),
      JSON.stringify({
        t: 'vfail',
        addr: 'b@x.io',
        code: 'NETWORK',
        message: 'lost',
        unconfirmed: true,
        at: 3,
      }),
    ];
    const state = foldEvents(parseJournal(`${lines.join('\n')}\n`));
    expect([...state!.verify!.entries()]).toEqual([
      [
        'a@x.io',
        { state: 'answered', answer: { status: 'valid', charged: true, remaining: 9, at: 3 } },
      ],
      ['b@x.io', { state: 'failed', code: 'NETWORK', message: 'lost', unconfirmed: true }],
    ]);
  });

  it('a batch sent again after a failure (refused with a 429, or by a resume) may have been processed from then on: its failure is forgotten', () => {
    const events = parseJournal([runLine, submitLine('a')].join('\n')) as JournalEvent[];
    const again = { ...(parseJournal(submitLine('a'))[0] as JournalEvent), at: 4 };
    events.push({ t: 'failed', batch: 'a', code: 'RATE_LIMITED', message: '429', at: 3 }, again);
    const state = foldEvents(events);
    expect(state?.batches.get('a')).toEqual({
      id: 'a',
      first: 0,
      last: 0,
      count: 1,
      idem: 'ia',
      sentAt: 4, // when it was last sent: what a mark of it as unanswered says
      failed: undefined,
    });
    // The failure alone (killed while waiting to send it again): it was not processed.
    const waiting = foldEvents(events.slice(0, -1));
    expect(waiting?.batches.get('a')?.failed).toEqual({ code: 'RATE_LIMITED', message: '429' });
  });

  it('folds only a journal that starts with its run header', () => {
    expect(foldEvents([])).toBeUndefined();
    expect(foldEvents(parseJournal(`${submitLine('0')}\n${runLine}\n`))).toBeUndefined();
  });

  it('folds every kind of batch event', () => {
    const events = parseJournal(
      [runLine, ...['a', 'b', 'c', 'd'].map(submitLine)].join('\n'),
    ) as JournalEvent[];
    events.push(
      { t: 'failed', batch: 'a', code: 'NETWORK', message: 'refused', at: 3 },
      { t: 'unconfirmed', batch: 'b', message: 'reset', at: 3 },
      { t: 'expired', batch: 'c', at: 3 },
      { t: 'split', batch: 'd', size: 7, at: 3 },
      { t: 'hits', upTo: 3, ranges: [[0, 1]], at: 4 },
    );
    const state = foldEvents(events);
    expect(state?.batches.get('a')?.failed).toEqual({ code: 'NETWORK', message: 'refused' });
    expect(state?.batches.get('b')?.unconfirmed).toEqual({ message: 'reset' });
    expect(state?.batches.get('c')?.expired).toBe(true);
    expect(state?.batches.get('d')?.splitSize).toBe(7);
    expect(state?.batches.get('a')?.unconfirmed).toBeUndefined();
    expect(state?.batches.get('b')?.failed).toBeUndefined();
    // Rows from 0 on count: the first hits event starts below row 0.
    expect(state?.hits).toEqual({ upTo: 3, ranges: [[0, 1]] });
  });

  it('folds the exit code a finished run journaled (whether it is started over depends on it), and none for an earlier build', () => {
    const done = (exit?: number) =>
      foldEvents([
        JSON.parse(runLine) as JournalEvent,
        { t: 'done', at: 3, output: '/data/out.csv', ...(exit === undefined ? {} : { exit }) },
      ])?.done;
    expect(done(0)).toEqual({ at: 3, output: '/data/out.csv', exit: 0 });
    expect(done(3)).toEqual({ at: 3, output: '/data/out.csv', exit: 3 });
    // Not known: no exit at all, not one that reads as "undefined".
    expect(done()).toStrictEqual({ at: 3, output: '/data/out.csv' });
    expect(done()).not.toHaveProperty('exit');
  });

  it('folds the accounts that took the run over, in order, and none for a run never taken over', () => {
    const adopted = (accounts: string[]) =>
      foldEvents([
        JSON.parse(runLine) as JournalEvent,
        ...accounts.map((account, i): JournalEvent => ({ t: 'adopted', account, at: 2 + i })),
      ])?.adopted;
    expect(adopted(['acct-b', 'acct-c'])).toEqual(['acct-b', 'acct-c']);
    expect(adopted(['acct-b'])).toEqual(['acct-b']);
    expect(adopted([])).toBeUndefined();
  });

  it('folds the refill batches in the order they were journaled, as no batch of their own (a resume rebuilds them from it)', () => {
    const state = foldEvents([
      JSON.parse(runLine) as JournalEvent,
      { t: 'refill', batch: 'g1', rows: [3, 5], at: 2 },
      JSON.parse(submitLine('0')) as JournalEvent,
      { t: 'refill', batch: 'g2', rows: [8], at: 3 },
    ]);
    expect(state?.refills).toEqual([
      { batch: 'g1', rows: [3, 5] },
      { batch: 'g2', rows: [8] },
    ]);
    expect([...(state?.batches.keys() ?? [])]).toEqual(['0']);
    expect(foldEvents([JSON.parse(runLine) as JournalEvent])?.refills).toBeUndefined();
  });

  it('a resumed journal with a blank line in the middle keeps every event after it', async () => {
    const dir = await runsDir();
    await mkdir(join(dir, 'k'));
    const path = join(dir, 'k', 'journal.jsonl');
    await writeFile(path, `${runLine}\n\n${submitLine('0')}\n`);
    const j = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
    await j.append({ t: 'expired', batch: '0' });
    await j.close();
    expect(j.state.batches.get('0')?.expired).toBe(true);
    const again = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
    await again.close();
    expect(again.state.batches.get('0')).toMatchObject({ idem: 'i0', expired: true });
    expect(await readFile(path, 'utf8')).toContain(submitLine('0'));
  });

  it('a journal of blank lines only, with no results beside it, is a new run', async () => {
    const dir = await runsDir();
    await mkdir(join(dir, 'k'));
    await writeFile(join(dir, 'k', 'journal.jsonl'), '\n\n');
    const j = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
    await j.close();
    expect(j.resumed).toBe(false);
  });

  it('a journal that is text but no run is refused as damaged, naming it, with what to do', async () => {
    const dir = await runsDir();
    await mkdir(join(dir, 'k'));
    const path = join(dir, 'k', 'journal.jsonl');
    await writeFile(path, `${submitLine('0')}\n`);
    const err = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: 'JOURNAL_DAMAGED',
      message: `the run journal ${path} does not start with a run header (it was damaged or edited)`,
      location: { file: path },
    });
    expect((err as { hint: string }).hint).toMatch(/^Nothing was sent\./);
    // Emptied while its results are beside it: said differently.
    await writeFile(path, '');
    await writeFile(join(dir, 'k', 'results-0.json'), '[]');
    await expect(
      openJournal({ runsDir: dir, key: 'k', header, restart: false, now }),
    ).rejects.toThrow('is missing or empty, while 1 downloaded result file(s)');
    await writeFile(path, ' \n');
    await expect(
      openJournal({ runsDir: dir, key: 'k', header, restart: false, now }),
    ).rejects.toThrow('is blank, while 1 downloaded result file(s)');
  });

  it('a journal that cannot be read is an error with its cause, and the lock is let go', async () => {
    const dir = await runsDir();
    await mkdir(join(dir, 'k', 'journal.jsonl'), { recursive: true });
    const err = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'INTERNAL' });
    expect((err as Error).message).toMatch(/^cannot write the run journal .*journal\.jsonl: /);
    expect((err as Error).cause).toMatchObject({ code: 'EISDIR' });
    expect(await hasJournal(dir, 'missing')).toBe(false);
  });

  it('a state directory that is a file is a usage error naming it', async () => {
    const file = join(await runsDir(), 'file');
    await writeFile(file, 'x');
    const err = await openJournal({ runsDir: file, key: 'k', header, restart: false, now }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'USAGE' });
    expect((err as Error).message).toBe(`cannot use the state directory ${file}: ENOTDIR`);
    expect((err as { hint: string }).hint).toMatch(/ENRICH_STATE_DIR/);
    expect((err as Error).cause).toMatchObject({ code: 'ENOTDIR' });
  });

  it('--restart removes subdirectories of the run too', async () => {
    const dir = await runsDir();
    const first = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
    await first.close();
    await mkdir(join(first.dir, 'parts', 'deep'), { recursive: true });
    const j = await openJournal({ runsDir: dir, key: 'k', header, restart: true, now });
    await j.close();
    await expect(readFile(join(first.dir, 'parts', 'deep'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('a run directory without a journal has no journal, and is no run', async () => {
    const dir = await runsDir();
    await mkdir(join(dir, 'empty'));
    await mkdir(join(dir, 'notrun'));
    await writeFile(join(dir, 'notrun', 'journal.jsonl'), `${submitLine('0')}\n`);
    expect(await hasJournal(dir, 'empty')).toBe(false);
    expect(await listRuns(dir)).toEqual([]);
  });

  it('earlierRunsOf: the newest of many first, a first line that is no run skipped', async () => {
    const dir = await runsDir();
    const ats = [30, 10, 60, 20, 50, 40];
    for (const [i, at] of ats.entries()) {
      const h = { ...header, input: { ...header.input, sha256: String(i).repeat(64) } };
      const j = await openJournal({
        runsDir: dir,
        key: `r${i}`,
        header: h,
        restart: false,
        now: () => at,
      });
      await j.close();
    }
    await mkdir(join(dir, 'odd'));
    await writeFile(join(dir, 'odd', 'journal.jsonl'), `${submitLine('0')}\n`);
    const run = {
      kind: 'contacts',
      input: { path: header.input.path, sha256: 'f'.repeat(64) },
      options: {},
    };
    const found = await earlierRunsOf(dir, 'new', run);
    expect(found.map((h) => h.at)).toEqual([60, 50, 40, 30, 20, 10]);
    // Another file's runs are looked at too (earlier-runs.ts tells them apart): not other options.
    const other = { ...run, input: { ...run.input, path: '/data/other.csv' } };
    expect(await earlierRunsOf(dir, 'new', other)).toHaveLength(6);
    expect(await earlierRunsOf(dir, 'new', { ...run, options: { top: 2 } })).toEqual([]);
  });

  it('runsMatching offers its matcher the header of each run a fold finds, and only those', async () => {
    const dir = await runsDir();
    const j = await openJournal({ runsDir: dir, key: 'run', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i0' });
    await j.close();
    const headerOf = (run: string, at: number) =>
      JSON.stringify({ t: 'run', v: 1, run, nonce: 'n', at, ...header });
    const odd: Record<string, string | undefined> = {
      'no-journal': undefined,
      'a-dir': undefined,
      // A run being made: its journal there, its header not yet written.
      empty: '',
      'submit-first': `${submitLine('0')}\n${headerOf('submit-first', 2)}\n`,
      // The header alone, its newline lost (a crash right after writing it): still a run.
      'no-newline': headerOf('no-newline', 3),
      // Damaged after its header: its header is all that is read.
      'damaged-later': `${headerOf('damaged-later', 4)}\n{"t":"sub\n${submitLine('1')}\n`,
      // Lines that are no event before the header: a fold skips them (a resume refuses them).
      'damaged-first': `{"t":"run","v":1,\n${headerOf('damaged-first', 6)}\n`,
      'no-event-first': `null\n\n${headerOf('no-event-first', 7)}\n`,
    };
    for (const [name, text] of Object.entries(odd)) {
      await mkdir(join(dir, name));
      if (name === 'a-dir') await mkdir(join(dir, name, 'journal.jsonl'));
      else if (text !== undefined) await writeFile(join(dir, name, 'journal.jsonl'), text);
    }
    const found = await runsMatching(dir, 'new', () => true);
    expect(found.map((h) => [h.t, h.run, h.at])).toEqual([
      ['run', 'no-event-first', 7],
      ['run', 'damaged-first', 6],
      ['run', 'run', 5],
      ['run', 'damaged-later', 4],
      ['run', 'no-newline', 3],
    ]);
    for (const name of ['run', ...Object.keys(odd)]) {
      const peeked = (await peekRun(dir, name))?.header;
      expect(peeked, name).toEqual(found.find((h) => h.run === name));
    }
    expect(await runsMatching(dir, 'run', (h) => h.run === 'run')).toEqual([]);
  });

  it.skipIf(!existsSync('/proc/self/fd'))(
    'reading the headers of every run leaves none of their journals open (a sweep of many would run out of files)',
    async () => {
      const dir = await runsDir();
      for (const key of ['a', 'b', 'c']) {
        const j = await openJournal({ runsDir: dir, key, header, restart: false, now });
        await j.close();
      }
      const openIn = () =>
        readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
          } catch {
            return false; // closed meanwhile (the listing's own descriptor)
          }
        });
      expect(await earlierRunsOf(dir, 'new', { kind: 'contacts', options: {} })).toHaveLength(3);
      expect(openIn()).toEqual([]);
    },
  );
});
