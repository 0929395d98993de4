import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchKeys, keepBatchKeys } from '../../src/pipeline/journal/batch-keys.js';
import { openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import { startBatch } from '../../src/pipeline/run/batch-task.js';
import type { BulkApi, SendControl } from '../../src/pipeline/types.js';
import { batchContext } from '../helpers/batch-context.js';
import { watchFlushes } from '../helpers/flushes.js';

// A batch's keys say which rows a POST that got no answer held. Since session 29 they are
// flushed to the disk (with their directory entries) before the POST, as its submit line is:
// after a power cut, the journal's "sent" and the keys of what was sent survive together.

afterEach(() => {
  vi.restoreAllMocks();
});

const header = {
  kind: 'contacts',
  input: { path: '/data/leads.csv', size: 120, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts leads.csv',
};

describe.runIf(process.platform === 'linux')('batch keys on disk', () => {
  it('are written by keepBatchKeys, and flushed with their directory entries by what it returns', async () => {
    const run = await mkdtemp(join(tmpdir(), 'enrich-batch-keys-'));
    const flushed = await watchFlushes();
    const flush0 = await keepBatchKeys(run, '0', ['s-a', 's-b']);
    expect(flushed).toEqual([]);
    expect(await batchKeys(run, '0')).toEqual(['s-a', 's-b']);
    await flush0();
    // The file, then (made just now) the run's entry of its directory, and that directory's of it.
    expect(flushed).toEqual([join(run, 'batch-keys', '0.keys'), run, join(run, 'batch-keys')]);
    flushed.length = 0;
    await (
      await keepBatchKeys(run, '1', ['s-c'])
    )();
    expect(flushed).toEqual([join(run, 'batch-keys', '1.keys'), join(run, 'batch-keys')]);
    expect(await batchKeys(run, '0')).toEqual(['s-a', 's-b']);
    expect(await batchKeys(run, '1')).toEqual(['s-c']);
  });

  it('are a file of mode 0600 (hashes, but of the account’s requests); where they cannot be kept, the run goes on', async () => {
    const run = await mkdtemp(join(tmpdir(), 'enrich-batch-keys-'));
    await (
      await keepBatchKeys(run, '0', ['s-a'])
    )();
    expect(statSync(join(run, 'batch-keys', '0.keys')).mode & 0o777).toBe(0o600);
    // A run directory that is a file (or gone): nothing kept, and flushing nothing succeeds.
    const notADir = join(run, 'batch-keys', '0.keys');
    const flush = await keepBatchKeys(notADir, '1', ['s-b']);
    await expect(flush()).resolves.toBeUndefined();
    expect(await batchKeys(notADir, '1')).toEqual([]);
  });

  it('leave no file or directory open behind them, and a batch never kept has none', async () => {
    const run = await mkdtemp(join(tmpdir(), 'enrich-batch-keys-'));
    const openFds = () => readdirSync('/proc/self/fd').length;
    const before = openFds();
    for (const id of ['0', '1', '2']) await (await keepBatchKeys(run, id, [`s-${id}`]))();
    expect(openFds()).toBe(before);
    expect(await batchKeys(run, '3')).toEqual([]);
    expect(await batchKeys(join(run, 'no-such-run'), '0')).toEqual([]);
  });

  it('are on disk before the POST, also when the transport journals each attempt', async () => {
    for (const journalsAttempts of [false, true]) {
      const runs = await mkdtemp(join(tmpdir(), 'enrich-batch-keys-'));
      const journal = await openJournal({
        runsDir: runs,
        key: 'k',
        header,
        restart: false,
        now: () => 1,
      });
      const flushed = await watchFlushes();
      let atPost: string[] = [];
      const submit = async (_k: unknown, _b: unknown, _i: unknown, how?: SendControl) => {
        await how?.hooks?.sending();
        atPost = [...flushed];
        return { job_id: 'j', download_url: 'http://fake/j', expiration_date: '9999999999' };
      };
      const api: BulkApi = {
        submit: Object.assign(submit, { journalsAttempts }),
        results: async () => ({ state: 'done', records: [], remainingCredits: 1 }),
      };
      const keepKeys = (id: string) => keepBatchKeys(journal.dir, id, ['s-a']);
      const items = [{ index: 0, element: { business_email: 'a@x.io' }, key: 'a' }];
      // A kill right after the submit line reaches the file must find the keys there too.
      const keysFile = join(journal.dir, 'batch-keys', '0.keys');
      let keysAtSubmit: boolean | undefined;
      const watched: Journal = {
        ...journal,
        state: journal.state,
        append: (event, options) => {
          if (event.t === 'submit') keysAtSubmit = existsSync(keysFile);
          return journal.append(event, options);
        },
      };
      try {
        await startBatch(batchContext(watched, api, { keepKeys }), '0', items, true).done;
      } finally {
        vi.restoreAllMocks();
        await journal.close();
      }
      expect(keysAtSubmit, `journalsAttempts: ${journalsAttempts}`).toBe(true);
      expect(atPost, `journalsAttempts: ${journalsAttempts}`).toEqual(
        expect.arrayContaining([join(journal.dir, 'batch-keys', '0.keys'), journal.path]),
      );
    }
  });
});
