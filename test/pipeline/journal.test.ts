import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readdir, readFile, appendFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deadPid } from '../helpers/pids.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';
import { describeError } from '../../src/cli/report-error.js';
import type { EnrichError } from '../../src/errors.js';
import { identityOf } from '../../src/pipeline/journal/run-lock.js';
import { spoolAnswer, spoolPath } from '../../src/pipeline/journal/spool.js';
import {
  foldEvents,
  listRuns,
  openJournal,
  parseJournal,
  runKey,
  sameInput,
} from '../../src/pipeline/journal/journal.js';

const input = { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) };
const header = {
  kind: 'contacts',
  input,
  options: { dedupe: true },
  command: 'enrich contacts leads.csv',
};
let t = 1000;
const now = () => t++;

describe('runKey', () => {
  it('depends on the input identity and request options, not on option order', () => {
    const a = runKey('contacts', input, { a: 1, b: 2 });
    expect(runKey('contacts', input, { b: 2, a: 1 })).toBe(a);
    expect(runKey('contacts', { ...input, sha256: 'cd'.repeat(32) }, { a: 1, b: 2 })).not.toBe(a);
    expect(runKey('companies', input, { a: 1, b: 2 })).not.toBe(a);
    expect(runKey('contacts', input, { a: 1, b: 3 })).not.toBe(a);
  });
});

describe('sameInput', () => {
  it('is one file read the same way: another sheet or encoding of it is another input; stdin never is', () => {
    // A run of another sheet (or read in another encoding) holds other rows: taking it for the
    // same input would serve (or take over) its answers for rows it never looked up.
    const a = { ...input, path: '/data/leads.xlsx', sheet: 'Q1', encoding: 'latin1' };
    expect(sameInput(a, { ...a })).toBe(true);
    expect(sameInput(input, { ...input })).toBe(true);
    expect(sameInput(a, { ...a, sheet: 'Q2' })).toBe(false);
    expect(sameInput(a, { ...a, sheet: undefined })).toBe(false);
    expect(sameInput(a, { ...a, encoding: 'windows-1252' })).toBe(false);
    expect(sameInput(a, { ...a, encoding: undefined })).toBe(false);
    expect(sameInput(a, { ...a, path: '/data/other.xlsx' })).toBe(false);
    expect(sameInput(a, { ...a, size: a.size + 1 })).toBe(false);
    expect(sameInput(a, { ...a, sha256: 'cd'.repeat(32) })).toBe(false);
    expect(sameInput({ ...input, path: '-' }, { ...input, path: '-' })).toBe(false);
  });
});

describe('journal', () => {
  it('discardNew removes a run this open began with nothing appended (and what lies beside it); never a run found, nor one written to', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const open = (key: string) => openJournal({ runsDir, key, header, restart: false, now });
    const fresh = await open('new');
    await writeFile(join(fresh.dir, 'output.json'), '{}');
    await fresh.discardNew();
    await fresh.close();
    expect(await readdir(fresh.dir)).toEqual([]);
    const next = await open('new');
    expect(next.resumed).toBe(false);
    await next.close();
    // Found on disk: kept, though nothing is appended this time.
    const found = await open('new');
    expect(found.resumed).toBe(true);
    await found.discardNew();
    await found.close();
    const kept = await open('new');
    expect(kept.resumed).toBe(true);
    await kept.close();
    // Written to: kept (it may hold a batch the service accepted).
    const written = await open('sent');
    await written.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
    await written.discardNew();
    await written.close();
    const again = await open('sent');
    expect([again.resumed, again.state.batches.has('0')]).toEqual([true, true]);
    await again.close();
  });

  it('persists batch events and resumes them in a new process', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'k1', header, restart: false, now });
    expect(j.resumed).toBe(false);
    await j.append(
      { t: 'submit', batch: '0', first: 0, last: 9, count: 10, idem: 'idem-0' },
      { durable: true },
    );
    await j.append({
      t: 'accepted',
      batch: '0',
      job: 'job-0',
      url: 'http://x/contacts/results/job-0.json',
      expires: 5000,
    });
    await j.append({ t: 'submit', batch: '1', first: 10, last: 12, count: 3, idem: 'idem-1' });
    await j.append({
      t: 'spooled',
      batch: '0',
      records: 10,
      credits: 7,
      remaining: 93,
      creditError: false,
    });
    expect(j.state.batches.get('0')?.spooled?.credits).toBe(7);
    await j.close();

    const again = await openJournal({ runsDir, key: 'k1', header, restart: false, now });
    expect(again.resumed).toBe(true);
    expect(again.state.header.nonce).toBe(j.state.header.nonce);
    expect(again.state.batches.get('0')).toMatchObject({
      job: 'job-0',
      idem: 'idem-0',
      spooled: { credits: 7 },
    });
    expect(again.state.batches.get('1')).toMatchObject({ first: 10, last: 12, idem: 'idem-1' });
    expect(again.state.batches.get('1')?.job).toBeUndefined();
    await again.close();

    const runs = await listRuns(runsDir);
    expect(runs.map((r) => r.key)).toEqual(['k1']);
  });

  it('ignores a torn last line left by a crash', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'k2', header, restart: false, now });
    await j.append(
      { t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i' },
      { durable: true },
    );
    await j.close();
    await appendFile(j.path, '{"t":"accepted","batch":"0","jo');
    const again = await openJournal({ runsDir, key: 'k2', header, restart: false, now });
    expect(again.state.batches.get('0')?.job).toBeUndefined();
    expect(again.state.batches.get('0')?.idem).toBe('i');
    await again.close();
  });

  it('refuses a journal with a damaged line before other events, cutting nothing (session 25)', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'km', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i' });
    await j.append({ t: 'accepted', batch: '0', job: 'J', url: 'u', expires: null });
    await j.close();
    const lines = (await readFile(j.path, 'utf8')).split('\n');
    lines[1] = `${(lines[1] as string).slice(0, 20)}\u0000`; // line 2 of 3 damaged
    const damaged = lines.join('\n');
    await writeFile(j.path, damaged);
    const open = () => openJournal({ runsDir, key: 'km', header, restart: false, now });
    await expect(open()).rejects.toMatchObject({
      code: 'JOURNAL_DAMAGED',
      exitCode: 2,
      location: { file: j.path, line: 2 },
      message: expect.stringMatching(
        /is damaged: line 2 is not a journal event, and events follow it/,
      ),
      // The way out names the line, and warns that what follows it may be paid for already.
      hint: expect.stringMatching(
        /^Nothing was sent\. .*mend or delete line 2 \(the events after it may be jobs already paid for\).*restart, which sends and pays for every row again\.$/,
      ),
    });
    // The accepted job after it is kept for the user to mend; blank lines after a torn end
    // are still a torn end.
    expect(await readFile(j.path, 'utf8')).toBe(damaged);
    await writeFile(j.path, `${lines.slice(0, 2).join('\n')}\n\n  \n`);
    const again = await open();
    expect(again.resumed).toBe(true);
    await again.close();
  });

  it('a listing of a journal damaged before its end shows the jobs after the damage (session 25)', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'kl', header, restart: false, now });
    await j.append({ t: 'hits', upTo: 0, ranges: [] });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i' });
    await j.append({ t: 'accepted', batch: '0', job: 'J-after', url: 'u', expires: null });
    await j.close();
    const lines = (await readFile(j.path, 'utf8')).split('\n');
    lines[1] = '{"t":"hi\u0000'; // the hits line, before the job
    await writeFile(j.path, lines.join('\n'));
    const [run] = await listRuns(runsDir);
    expect([...run!.state.batches.values()].map((b) => b.job)).toEqual(['J-after']);
    await expect(
      openJournal({ runsDir, key: 'kl', header, restart: false, now }),
    ).rejects.toMatchObject({ code: 'JOURNAL_DAMAGED' });
  });

  it('a run resumed after a torn last line appends on a clean line: the run after it keeps every event', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'kt', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i' });
    await j.close();
    await appendFile(j.path, '{"t":"accepted","batch":"0","jo'); // a crash mid-write
    const resumed = await openJournal({ runsDir, key: 'kt', header, restart: false, now });
    await resumed.append({ t: 'accepted', batch: '0', job: 'J', url: 'u', expires: null });
    await resumed.append({ t: 'submit', batch: '1', first: 2, last: 2, count: 1, idem: 'k' });
    await resumed.close();
    const third = await openJournal({ runsDir, key: 'kt', header, restart: false, now });
    expect(third.state.batches.get('0')?.job).toBe('J');
    expect(third.state.batches.get('1')?.idem).toBe('k');
    await third.close();
  });

  it('keeps a last event whose newline was lost (it may be a job the service accepted)', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'kn', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
    await j.close();
    await appendFile(
      j.path,
      '{"t":"accepted","batch":"0","job":"J","url":"u","expires":null,"at":1}',
    );
    const resumed = await openJournal({ runsDir, key: 'kn', header, restart: false, now });
    await resumed.append({ t: 'expired', batch: '0' });
    await resumed.close();
    const third = await openJournal({ runsDir, key: 'kn', header, restart: false, now });
    expect(third.state.batches.get('0')).toMatchObject({ job: 'J', expired: true });
    await third.close();
  });

  it('never silently replaces a damaged, emptied or deleted journal (a new one would pay again)', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'kd', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
    await j.close();
    await writeFile(join(j.dir, 'results-0.json'), '[]');
    const text = await readFile(j.path, 'utf8');
    const open = () => openJournal({ runsDir, key: 'kd', header, restart: false, now });
    await writeFile(j.path, `garbage${text.slice(7)}`);
    await expect(open()).rejects.toMatchObject({
      code: 'JOURNAL_DAMAGED',
      exitCode: 2,
      message: expect.stringMatching(/journal\.jsonl does not start with a run header/),
    });
    await writeFile(j.path, '');
    await expect(open()).rejects.toMatchObject({
      code: 'JOURNAL_DAMAGED',
      message: expect.stringMatching(/missing or empty, while 1 downloaded result file/),
    });
    await rm(j.path);
    await expect(open()).rejects.toMatchObject({ code: 'JOURNAL_DAMAGED' });
    // What was refused is still there to recover; restart is the way to start over.
    expect(await readFile(join(j.dir, 'results-0.json'), 'utf8')).toBe('[]');
    const fresh = await openJournal({ runsDir, key: 'kd', header, restart: true, now });
    expect(fresh.resumed).toBe(false);
    await fresh.close();
  });

  it('starts over with restart: a new nonce and no batches', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'k3', header, restart: false, now });
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i' });
    await j.close();
    const fresh = await openJournal({ runsDir, key: 'k3', header, restart: true, now });
    expect(fresh.resumed).toBe(false);
    expect(fresh.state.batches.size).toBe(0);
    expect(fresh.state.header.nonce).not.toBe(j.state.header.nonce);
    // The lock and the start file that tells its holder from a later process are kept.
    const held = ['lock', ...(identityOf(process.pid) ? [`lock.pid-${process.pid}`] : [])];
    expect((await readdir(fresh.dir)).filter((e) => e.startsWith('lock'))).toEqual(held);
    await fresh.close();
  });

  it('never holds the API key: the header holds only what it is given', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    const j = await openJournal({ runsDir, key: 'k4', header, restart: false, now });
    await j.close();
    const text = await readFile(j.path, 'utf8');
    expect(Object.keys(JSON.parse(text.split('\n')[0] as string)).sort()).toEqual(
      ['at', 'command', 'input', 'kind', 'nonce', 'options', 'run', 't', 'v'].sort(),
    );
  });

  it('folds failures, expiry and splits', () => {
    const events = parseJournal(
      [
        JSON.stringify({ t: 'run', v: 1, run: 'r', nonce: 'n', ...header, at: 1 }),
        JSON.stringify({ t: 'submit', batch: '0', first: 0, last: 3, count: 4, idem: 'a', at: 2 }),
        JSON.stringify({ t: 'failed', batch: '0', code: 'NETWORK', message: 'down', at: 3 }),
        JSON.stringify({ t: 'accepted', batch: '0', job: 'j', url: 'u', expires: null, at: 4 }),
        JSON.stringify({ t: 'expired', batch: '0', at: 5 }),
        JSON.stringify({ t: 'split', batch: '9', size: 2, at: 6 }),
      ].join('\n'),
    );
    const state = foldEvents(events);
    // A later acceptance clears an earlier failure (a retry on resume succeeded).
    expect(state?.batches.get('0')).toMatchObject({ job: 'j', expired: true, failed: undefined });
    expect(state?.batches.has('9')).toBe(false);
    expect(foldEvents([])).toBeUndefined();
  });

  it('lets one process at a time run a job: a live holder stops the second, a dead one is taken over', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-journal-'));
    await mkdir(join(runsDir, 'k5'), { recursive: true });
    const lock = join(runsDir, 'k5', 'lock');
    await writeFile(lock, String(process.ppid)); // a live process that is not us
    await expect(
      openJournal({ runsDir, key: 'k5', header, restart: false, now }),
    ).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      exitCode: 2,
      message: expect.stringContaining(`pid ${process.ppid}`),
      // The pid may be another program's now (a reboot): the hint names the file to remove.
      hint: expect.stringContaining(`if pid ${process.ppid} is not enrich`),
    });
    await expect(
      openJournal({ runsDir, key: 'k5', header, restart: false, now }),
    ).rejects.toMatchObject({ hint: expect.stringContaining(`remove ${lock})`) });
    await expect(
      openJournal({ runsDir, key: 'k5', header, restart: true, now }),
    ).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
    });
    await writeFile(lock, String(deadPid()));
    const j = await openJournal({ runsDir, key: 'k5', header, restart: false, now });
    expect(await readFile(lock, 'utf8')).toBe(String(process.pid));
    await j.close();
    expect(existsSync(lock)).toBe(false);
  });
});

describe('a journal on a full disk', () => {
  rootTest(
    '(root: a tmpfs) a spool file or a journal line the disk refuses mid-run is FILE_SYSTEM naming it, and the journal is kept',
    async () => {
      await withTmpfs(
        'size=64k',
        async (small) => {
          const runsDir = join(small, 'runs');
          const j = await openJournal({ runsDir, key: 'ks', header, restart: false, now });
          await j.append(
            { t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'idem-0' },
            { durable: true },
          );
          await j.append({
            t: 'accepted',
            batch: '0',
            job: 'job-0',
            url: 'http://x/r',
            expires: 9,
          });
          await writeFile(join(small, 'fill'), Buffer.alloc(64 * 1024)).catch(() => undefined);
          // The download of a job accepted (and charged): its spool file does not fit.
          const spool = spoolPath(j.dir, '0');
          const records = [{ credit_charged: true, about: 'x'.repeat(16 * 1024) }];
          const failed = (await spoolAnswer(j, '0', { records, remainingCredits: 5 }).catch(
            (e: unknown) => e,
          )) as EnrichError;
          expect(failed).toMatchObject({
            code: 'FILE_SYSTEM',
            exitCode: 2,
            message: `cannot write ${spool}: the disk is full (no space left on the device)`,
            location: { file: spool },
          });
          expect(failed.hint).toContain('the run journal is kept, so nothing paid is bought again');
          expect(describeError(failed, false)).toMatchObject({ exitCode: 2 });
          expect(describeError(failed, false).text).not.toMatch(/internal|report it/);
          // A journal line that does not fit: the same, naming the journal.
          await expect(
            j.append({
              t: 'submit',
              batch: '1',
              first: 2,
              last: 2,
              count: 1,
              idem: 'i'.repeat(9000),
            }),
          ).rejects.toMatchObject({
            code: 'FILE_SYSTEM',
            message: `cannot write ${j.path}: the disk is full (no space left on the device)`,
          });
          await j.close();
          // Space freed: the same run resumes with its accepted job, to download it again.
          await rm(join(small, 'fill'));
          expect(await readdir(j.dir)).not.toContain(basename(spool));
          const again = await openJournal({ runsDir, key: 'ks', header, restart: false, now });
          expect(again.resumed).toBe(true);
          expect(again.state.batches.get('0')?.job).toBe('job-0');
          expect(again.state.batches.has('1')).toBe(false);
          await again.close();
        },
        { lazy: true },
      );
    },
  );

  rootTest(
    '(root: a tmpfs) is refused as FILE_SYSTEM naming the place, before anything is sent, and leaves no lock',
    async () => {
      await withTmpfs('size=64k', async (small) => {
        const runsDir = join(small, 'runs');
        await mkdir(runsDir);
        // A new run: its lock's files cannot be written.
        await writeFile(join(small, 'fill'), Buffer.alloc(64 * 1024)).catch(() => undefined);
        await expect(
          openJournal({ runsDir, key: 'kf', header, restart: false, now }),
        ).rejects.toMatchObject({
          code: 'FILE_SYSTEM',
          exitCode: 2,
          message: `cannot write ${join(runsDir, 'kf')}: the disk is full (no space left on the device)`,
        });
        expect(await readdir(join(runsDir, 'kf'))).toEqual([]);
        // Room for the lock's two files (a page each) and not for the journal's header: the
        // lock taken is let go again.
        await rm(join(small, 'fill'));
        await writeFile(join(small, 'fill'), Buffer.alloc(56 * 1024));
        const kh = join(runsDir, 'kh');
        await expect(
          openJournal({ runsDir, key: 'kh', header, restart: false, now }),
        ).rejects.toMatchObject({
          code: 'FILE_SYSTEM',
          message: `cannot write ${join(kh, 'journal.jsonl')}: the disk is full (no space left on the device)`,
        });
        expect((await readdir(kh)).filter((f) => f.startsWith('lock'))).toEqual([]);
      });
    },
  );
});
