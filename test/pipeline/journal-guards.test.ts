import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import { startBatch } from '../../src/pipeline/run/batch-task.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import { batchContext } from '../helpers/batch-context.js';

// What the journal guards (issue 21: mutants of journal.ts that no test saw): the lock of the
// run that holds it, and the POST that must never go out unless its batch is on disk.

const header = {
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
};
let t = 1000;
const now = () => t++;
const runsDir = () => mkdtemp(join(tmpdir(), 'enrich-journal-guards-'));

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
    const j = await openJournal({
      runsDir: await runsDir(),
      key: 'k',
      header,
      restart: false,
      now,
    });
    await j.close(); // the file handle is gone: the next write fails
    const append = j.append(
      { t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'i' },
      { durable: true },
    );
    await expect(append).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(append).rejects.toThrow(`cannot write the run journal ${j.path}`);
  });

  it('a batch whose submit event cannot be written is never POSTed', async () => {
    const journal = await openJournal({
      runsDir: await runsDir(),
      key: 'k',
      header,
      restart: false,
      now,
    });
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
    const items = [{ index: 0, element: { business_email: 'a@x.io' } }];
    await expect(startBatch(ctx, '0', items, true).done).rejects.toMatchObject({
      code: 'INTERNAL',
    });
    expect(posts).toBe(0);
  });

  it('journals the submit event durably (flushed) before the POST it guards', async () => {
    const journal = await openJournal({
      runsDir: await runsDir(),
      key: 'k',
      header,
      restart: false,
      now,
    });
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
      await startBatch(batchContext(watched, api), '0', [{ index: 0, element: {} }], true).done;
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
    const j = await openJournal({
      runsDir: await runsDir(),
      key: 'k',
      header,
      restart: false,
      now,
    });
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
