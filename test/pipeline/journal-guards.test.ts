import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import {
  earlierRunsOf,
  hasJournal,
  listRuns,
  openJournal,
  type Journal,
} from '../../src/pipeline/journal/journal.js';
import { startBatch } from '../../src/pipeline/run/batch-task.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import { batchContext } from '../helpers/batch-context.js';
import { flushedTo, watchFlushSpans, watchFlushes } from '../helpers/flushes.js';
import { LEADS_HEADER, ticking } from '../helpers/journal-run.js';

// What the journal guards (issue 21: mutants of journal.ts that no test saw): the lock of the
// run that holds it, and the POST that must never go out unless its batch is on disk.

const header = LEADS_HEADER;
const now = ticking();
const runsDir = () => mkdtemp(join(tmpdir(), 'enrich-journal-guards-'));
/** A new run's journal in a fresh state directory. */
const freshJournal = async () =>
  openJournal({ runsDir: await runsDir(), key: 'k', header, restart: false, now });

describe('the journal guards', () => {
  it('--restart deletes everything of the run but the lock this process just took', async () => {
    const dir = await runsDir();
    const first = await openJournal({ runsDir: dir, key: 'k', header, restart: false, now });
    await first.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
    await writeFile(join(first.dir, 'results-0.json'), '[]');
    await first.close();
    const j = await openJournal({ runsDir: dir, key: 'k', header, restart: true, now });
    try {
      expect(existsSync(join(j.dir, 'results-0.json'))).toBe(false);
      expect(j.state.batches.size).toBe(0);
      const lock = await readFile(join(j.dir, 'lock'), 'utf8');
      expect(lock).toContain(String(process.pid));
      // The lock still keeps a second run of the same job out.
      await expect(
        openJournal({ runsDir: dir, key: 'k', header, restart: true, now }),
      ).rejects.toMatchObject({ code: 'RUN_IN_PROGRESS' });
    } finally {
      await j.close();
    }
    expect(existsSync(join(j.dir, 'lock'))).toBe(false);
  });

  it('a failed journal write is an error (INTERNAL, naming the journal), never swallowed', async () => {
    const j = await freshJournal();
    await j.close(); // the file handle is gone: the next write fails
    const append = j.append(
      { t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' },
      { durable: true },
    );
    await expect(append).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(append).rejects.toThrow(`cannot write the run journal ${j.path}`);
  });

  it('a batch whose submit event cannot be written is never POSTed', async () => {
    const journal = await freshJournal();
    await journal.close(); // every append now fails
    let posts = 0;
    const api: BulkApi = {
      submit: async () => {
        posts++;
        return { job_id: 'j', download_url: 'http://fake/j', expiration_date: '9999999999' };
      },
      results: async () => ({ state: 'done', records: [], remainingCredits: 1 }),
    };
    const ctx = batchContext(journal, api);
    const items = [{ index: 0, element: { business_email: 'a@x.io' }, key: 'a' }];
    await expect(startBatch(ctx, '0', items, true).done).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    expect(posts).toBe(0);
  });

  it('journals the submit event durably (flushed) before the POST it guards', async () => {
    const journal = await freshJournal();
    const calls: string[] = [];
    const append = journal.append.bind(journal);
    const watched: Journal = {
      ...journal,
      state: journal.state,
      append: (event, options) => {
        calls.push(`${event.t}:${options?.durable === true ? 'durable' : 'lazy'}`);
        return append(event, options);
      },
    };
    const api: BulkApi = {
      submit: async () => {
        calls.push('POST');
        return { job_id: 'j', download_url: 'http://fake/j', expiration_date: '9999999999' };
      },
      results: async () => ({ state: 'done', records: [], remainingCredits: 1 }),
    };
    try {
      await startBatch(batchContext(watched, api), '0', [{ index: 0, element: {}, key: '' }], true)
        .done;
    } finally {
      await journal.close();
    }
    expect(calls.slice(0, 3)).toEqual(['submit:durable', 'POST', 'accepted:durable']);
  });
});

describe('durable appends', () => {
  it('flush to disk (datasync) exactly the events asked to be durable, before they resolve', async () => {
    const probe = await open(join(tmpdir(), `enrich-probe-${process.pid}`), 'w');
    const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const j = await freshJournal();
    const sync = vi.spyOn(proto, 'datasync');
    try {
      await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' });
      expect(sync).toHaveBeenCalledTimes(0);
      await j.append(
        { t: 'accepted', batch: '0', job: 'j', url: 'u', expires: null },
        { durable: true },
      );
      expect(sync).toHaveBeenCalledTimes(1);
      await j.append({ t: 'expired', batch: '0' }, { durable: false });
      expect(sync).toHaveBeenCalledTimes(1);
    } finally {
      sync.mockRestore();
      await j.close();
    }
  });
});

describe.runIf(process.platform === 'linux')('durable appends at once', () => {
  it('each resolves with its line on the disk, the lines after a durable one waiting for its flush', async () => {
    const j = await freshJournal();
    const spans = await watchFlushSpans();
    const appends = Array.from({ length: 16 }, (_, i) => {
      const addr = `a${i}@x.io`;
      return j.append({ t: 'vsend', addr }, { durable: true }).then(async () => {
        const text = await readFile(j.path, 'utf8');
        const at = text.indexOf(`"addr":"${addr}"`);
        return flushedTo(
          spans,
          j.path,
          Buffer.byteLength(text.slice(0, text.indexOf('\n', at) + 1)),
        );
      });
    });
    try {
      expect(await Promise.all(appends)).toEqual(Array(16).fill(true));
      expect(spans.filter((s) => s.path === j.path && s.done)).toHaveLength(16);
    } finally {
      vi.restoreAllMocks();
      await j.close();
    }
  });

  it('close waits for the durable lines still being written and flushed before it closes the file', async () => {
    const j = await freshJournal();
    const spans = await watchFlushSpans();
    // The second line waits for the first's flush: close must wait for both.
    const pending = [
      j.append({ t: 'vsend', addr: 'a@x.io' }, { durable: true }),
      j.append({ t: 'vsend', addr: 'b@x.io' }, { durable: true }),
    ];
    try {
      await j.close();
      await expect(Promise.all(pending)).resolves.toEqual([undefined, undefined]);
      const ofJournal = spans.filter((s) => s.path === j.path);
      expect(ofJournal.map((s) => s.done)).toEqual([true, true]);
      expect(ofJournal[1]!.size).toBe((await readFile(j.path)).length);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe.runIf(process.platform === 'linux')('a new journal on disk', () => {
  it('has its name, and its run directory’s when made just now, flushed with its header; a resumed one flushes no directory', async () => {
    const state = await runsDir();
    const runs = join(state, 'runs');
    const flushed = await watchFlushes();
    try {
      const j = await openJournal({ runsDir: runs, key: 'k', header, restart: false, now });
      // The header, then the new levels' names from the top: state/runs, runs/k, k/journal.jsonl.
      expect(flushed).toEqual([j.path, state, runs, j.dir]);
      await j.close();
      flushed.length = 0;
      const again = await openJournal({ runsDir: runs, key: 'k2', header, restart: false, now });
      expect(flushed).toEqual([again.path, runs, again.dir]);
      await again.close();
      flushed.length = 0;
      const resumed = await openJournal({ runsDir: runs, key: 'k', header, restart: false, now });
      expect(resumed.resumed).toBe(true);
      expect(flushed).toEqual([]);
      await resumed.close();
      const restarted = await openJournal({ runsDir: runs, key: 'k', header, restart: true, now });
      expect(flushed).toEqual([restarted.path, restarted.dir]);
      await restarted.close();
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('what the journal tells a new run about earlier ones', () => {
  const headerOf = (sha: string, o: Record<string, unknown> = {}, kind = 'contacts') => ({
    kind,
    input: { path: '/data/leads.csv', size: 120, sha256: sha.repeat(64) },
    options: o,
    command: 'enrich contacts leads.csv',
  });
  const runOf = (h: ReturnType<typeof headerOf>) => ({
    kind: h.kind,
    input: h.input,
    options: h.options,
  });

  it('earlierRunsOf names the other runs, newest first, of the same kind and options, of any file', async () => {
    const dir = await runsDir();
    const open1 = async (key: string, h: ReturnType<typeof headerOf>, at: number) =>
      (await openJournal({ runsDir: dir, key, header: h, restart: false, now: () => at })).close();
    await open1('old', headerOf('a', { dedupe: true, top: 1 }), 10);
    await open1('newer', headerOf('b', { top: 1, dedupe: true }), 20);
    await open1('other-kind', headerOf('c', { dedupe: true, top: 1 }, 'companies'), 30);
    await open1('other-options', headerOf('d', { dedupe: false, top: 1 }), 40);
    await open1(
      'other-file',
      {
        ...headerOf('f', { dedupe: true, top: 1 }),
        input: { path: '/x/leads-27.csv', size: 1, sha256: 'f'.repeat(64) },
      },
      5,
    );
    await writeFile(join(dir, 'not-a-run'), 'x');
    const now = headerOf('e', { dedupe: true, top: 1 });
    const found = await earlierRunsOf(dir, 'current', runOf(now));
    expect(found.map((h) => [h.run, h.at])).toEqual([
      ['newer', 20],
      ['old', 10],
      ['other-file', 5],
    ]);
    // Never the run itself (its own key).
    expect(
      (await earlierRunsOf(dir, 'newer', runOf(headerOf('b', { top: 1, dedupe: true })))).map(
        (h) => h.run,
      ),
    ).toEqual(['old', 'other-file']);
    expect(await earlierRunsOf(join(dir, 'missing'), 'k', runOf(now))).toEqual([]);
  });

  it('hasJournal and listRuns see journaled runs only, newest first', async () => {
    const dir = await runsDir();
    expect(await hasJournal(dir, 'a')).toBe(false);
    for (const key of ['a', 'b']) {
      const j = await openJournal({ runsDir: dir, key, header, restart: false, now });
      await j.close();
      await new Promise((r) => setTimeout(r, 20));
    }
    await writeFile(join(dir, 'stray.txt'), 'x');
    expect(await hasJournal(dir, 'a')).toBe(true);
    const runs = await listRuns(dir);
    expect(runs.map((r) => r.key)).toEqual(['b', 'a']);
    expect(runs[0]?.dir).toBe(join(dir, 'b'));
    expect(await listRuns(join(dir, 'missing'))).toEqual([]);
    // A run resumed later (its journal changed last) keeps its place: by when it started
    // (regression: it moved to the top).
    const a = await openJournal({ runsDir: dir, key: 'a', header, restart: false, now });
    await a.append({ t: 'hits', upTo: 1, ranges: [] });
    await a.close();
    expect((await listRuns(dir)).map((r) => r.key)).toEqual(['b', 'a']);
  });

  it("folds the rows an earlier attempt took from the cache: ranges in order, a resumed attempt's only past upTo", async () => {
    const j = await freshJournal();
    try {
      await j.append({ t: 'hits', upTo: 9, ranges: [[2, 4]] });
      await j.append({ t: 'hits', upTo: 5, ranges: [[3, 3]] });
      await j.append({
        t: 'hits',
        upTo: 20,
        ranges: [
          [9, 9],
          [12, 15],
        ],
      });
      expect(j.state.hits).toEqual({
        upTo: 20,
        ranges: [
          [2, 4],
          [12, 15],
        ],
      });
      await j.append({ t: 'done', output: '/out.csv' });
      expect(j.state.done).toEqual({ at: expect.any(Number) as number, output: '/out.csv' });
      // An event for a batch never submitted is ignored.
      await j.append({ t: 'expired', batch: 'nope' });
      expect(j.state.batches.has('nope')).toBe(false);
    } finally {
      await j.close();
    }
  });
});
