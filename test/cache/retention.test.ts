import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneFinishedRuns } from '../../src/cache/retention.js';
import { holdsUndownloadedJobs } from '../../src/pipeline/run/undownloaded.js';
import { tempDir } from '../integration/bulk-harness.js';

const NOW = Date.now();
const header = {
  t: 'run',
  v: 1,
  run: 'r',
  nonce: 'n',
  kind: 'contacts',
  input: { path: '/in.csv', size: 1, sha256: 'x' },
  options: {},
  command: 'enrich contacts in.csv',
  at: NOW - 1000,
};
const submit = { t: 'submit', batch: '0', first: 0, last: 9, count: 10, idem: 'k', at: NOW };
const accepted = (expires: number) => ({
  t: 'accepted',
  batch: '0',
  job: 'job-1',
  url: 'http://127.0.0.1/r',
  expires,
  at: NOW,
});
const done = { t: 'done', output: '/out.csv', at: NOW };

async function runsWith(journals: Record<string, object[]>): Promise<string> {
  const runsDir = await tempDir('enrich-retention-');
  for (const [name, events] of Object.entries(journals)) {
    await mkdir(join(runsDir, name));
    await writeFile(
      join(runsDir, name, 'journal.jsonl'),
      events.map((e) => JSON.stringify(e)).join('\n') + '\n',
    );
  }
  return runsDir;
}

describe('pruneFinishedRuns', () => {
  it('keeps a run whose output was written while jobs wait to be downloaded (running, unconfirmed, submitting); removes one whose jobs are downloaded, failed or expired (regression: every run ending `done` was erased)', async () => {
    const runsDir = await runsWith({
      timedOut: [header, submit, accepted(NOW + 86_400_000), done],
      unconfirmed: [header, submit, { t: 'unconfirmed', batch: '0', message: 'm', at: NOW }, done],
      submitting: [header, submit, done],
      downloaded: [
        header,
        submit,
        accepted(NOW + 86_400_000),
        {
          t: 'spooled',
          batch: '0',
          records: 10,
          credits: 10,
          remaining: 0,
          creditError: false,
          at: NOW,
        },
        done,
      ],
      expired: [header, submit, accepted(NOW - 1), done],
      failed: [header, submit, { t: 'failed', batch: '0', code: 'X', message: 'm', at: NOW }, done],
      notDone: [header],
    });
    // Hidden entries are locks (of output files, of addresses in flight), no runs: neither counted nor removed.
    await mkdir(join(runsDir, '.outputs', 'ab12'), { recursive: true });
    // Nor is what has no journal: a file left there, a directory without one (regression: a
    // stray file was counted "kept: an unfinished run").
    await writeFile(join(runsDir, 'notes.txt'), 'mine\n');
    await mkdir(join(runsDir, 'empty'));
    const report = await pruneFinishedRuns(runsDir, {
      olderThanMs: 0,
      now: NOW + 60_000,
      holdsJobs: holdsUndownloadedJobs,
    });
    expect(report).toMatchObject({ removed: 3, kept: 4 });
    expect((await readdir(runsDir)).sort()).toEqual([
      '.outputs',
      'empty',
      'notDone',
      'notes.txt',
      'submitting',
      'timedOut',
      'unconfirmed',
    ]);
  });
});
