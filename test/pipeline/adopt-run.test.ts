import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type ErrorCode } from '../../src/errors.js';
import { journalAccount, openJournal } from '../../src/pipeline/journal/journal.js';
import { adoptableRun } from '../../src/pipeline/run/adopt-run.js';
import type { BulkApi } from '../../src/pipeline/types.js';

// Which run of the same file a new key takes over (adopt-run.ts), seen apart from a service:
// what is asked, and what each answer decides.

const input = { path: '/data/leads.csv', size: 10, sha256: 'a'.repeat(64) };
const base = { service: 'http://127.0.0.1:1', metadata: {} };
const NOW = 1_000_000;

/** A runs directory holding the run of `input` journaled by account `old`, with one job accepted. */
async function oldRun(o: { expires?: number | null; adopted?: string; options?: object } = {}) {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-adopt-'));
  const j = await openJournal({
    runsDir,
    key: 'old-run',
    header: {
      kind: 'contacts',
      input,
      options: { ...base, account: journalAccount('old'), ...o.options },
      command: 'enrich contacts leads.csv',
    },
    restart: false,
    now: () => 1,
  });
  await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i0' });
  const expires = o.expires === undefined ? NOW + 60_000 : o.expires;
  await j.append({ t: 'accepted', batch: '0', job: 'job-0', url: 'http://x/r/job-0', expires });
  if (o.adopted) await j.append({ t: 'adopted', account: journalAccount(o.adopted) });
  await j.close();
  return runsDir;
}

/** A service whose results endpoint answers `answer` (or throws it), counting the asks. */
function service(answer: () => never | { state: 'pending' }) {
  const asked: string[] = [];
  const api = {
    submit: () => Promise.reject(new Error('no POST while deciding')),
    results: (_kind: string, job: string) => {
      asked.push(job);
      return Promise.resolve().then(answer);
    },
  } as unknown as BulkApi;
  return { api, asked };
}

const httpError = (status: number, code: ErrorCode) => () => {
  throw new ApiError(code, { status, method: 'GET', path: '/contacts/results', message: 'no' });
};

const adopt = (runsDir: string, api: BulkApi, account = 'new') =>
  adoptableRun({
    runsDir,
    key: 'new-run',
    kind: 'contacts',
    input,
    options: { ...base, account: journalAccount(account) },
    account,
    api,
    now: () => NOW,
  });

describe('adoptableRun', () => {
  it('takes the run over when the service answers this key about its job (202)', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    expect(await adopt(await oldRun(), api)).toBe('old-run');
    expect(asked).toEqual(['job-0']);
  });

  it.each([
    [401, 'AUTH_INVALID'],
    [403, 'AUTH_FORBIDDEN'],
    [404, 'API_NOT_FOUND'],
  ] as const)('leaves it alone on a %i (not this key to read)', async (status, code) => {
    const { api } = service(httpError(status, code));
    expect(await adopt(await oldRun(), api)).toBeUndefined();
  });

  it('stops before deciding when the service cannot answer (5xx after retries)', async () => {
    const { api } = service(httpError(503, 'SERVER_ERROR'));
    await expect(adopt(await oldRun(), api)).rejects.toMatchObject({ code: 'SERVER_ERROR' });
  });

  it('never asks about a job past its expiry (its 404 proves nothing): not taken over', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    expect(await adopt(await oldRun({ expires: NOW - 1 }), api)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('a key that took the run over once resumes it without asking', async () => {
    const { api, asked } = service(httpError(404, 'API_NOT_FOUND'));
    expect(await adopt(await oldRun({ adopted: 'new' }), api)).toBe('old-run');
    expect(asked).toEqual([]);
  });

  it('only runs with the same request options are candidates', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    const runsDir = await oldRun({ options: { metadata: { mobile_phone_enrichment: true } } });
    expect(await adopt(runsDir, api)).toBeUndefined();
    expect(asked).toEqual([]);
  });
});
