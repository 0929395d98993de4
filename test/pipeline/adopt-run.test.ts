import { mkdtemp, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type ErrorCode } from '../../src/errors.js';
import { journalAccount, openJournal, type NewEvent } from '../../src/pipeline/journal/journal.js';
import { adoptableRun } from '../../src/pipeline/run/adopt-run.js';
import type { BulkApi } from '../../src/pipeline/types.js';

// Which run of the same file a new key takes over (adopt-run.ts), seen apart from a service:
// what is asked, and what each answer decides.

const input = { path: '/data/leads.csv', size: 10, sha256: 'a'.repeat(64) };
const base = { service: 'http://127.0.0.1:1', metadata: {} };
const NOW = 1_000_000;

/** A runs directory holding the run of `input` journaled by account `old`, with one job accepted. */
async function oldRun(
  o: {
    expires?: number | null;
    adopted?: string;
    options?: object;
    /** The whole options journaled, in their order (instead of base's with `options`). */
    rawOptions?: Record<string, unknown>;
    kind?: 'contacts' | 'companies';
    input?: Partial<typeof input>;
    account?: string;
    /** Events after the first job's acceptance (more jobs, their downloads). */
    then?: NewEvent[];
  } = {},
) {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-adopt-'));
  const j = await openJournal({
    runsDir,
    key: 'old-run',
    header: {
      kind: o.kind ?? 'contacts',
      input: { ...input, ...o.input },
      options: o.rawOptions ?? {
        ...base,
        account: journalAccount(o.account ?? 'old'),
        ...o.options,
      },
      command: 'enrich contacts leads.csv',
    },
    restart: false,
    now: () => 1,
  });
  await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'i0' });
  const expires = o.expires === undefined ? NOW + 60_000 : o.expires;
  await j.append({ t: 'accepted', batch: '0', job: 'job-0', url: 'http://x/r/job-0', expires });
  for (const e of o.then ?? []) await j.append(e);
  if (o.adopted) await j.append({ t: 'adopted', account: journalAccount(o.adopted) });
  await j.close();
  return runsDir;
}

/** A second job of the old run, accepted (and downloaded when `spooled`). */
const secondJob = (spooled = false): NewEvent[] => [
  { t: 'submit', batch: '1', first: 2, last: 3, count: 2, idem: 'i1' },
  { t: 'accepted', batch: '1', job: 'job-1', url: 'http://x/r/job-1', expires: null },
  ...(spooled ? [spooledEvent('1')] : []),
];
const spooledEvent = (batch: string): NewEvent => ({
  t: 'spooled',
  batch,
  records: 2,
  credits: 2,
  remaining: 9,
  creditError: false,
});

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

const adopt = (runsDir: string, api: BulkApi, account = 'new', of = input) =>
  adoptableRun({
    runsDir,
    key: 'new-run',
    kind: 'contacts',
    input: of,
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

  it('a run this key journaled is resumed as it is: no other run is looked at', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    const runsDir = await oldRun();
    const mine = await openJournal({
      runsDir,
      key: 'new-run',
      header: { kind: 'contacts', input, options: base, command: 'enrich contacts leads.csv' },
      restart: false,
      now: () => 2,
    });
    await mine.close();
    expect(await adopt(runsDir, api)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('runs of another kind, input (path, size, content), of stdin, or of this same account are no candidates', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    for (const o of [
      { kind: 'companies' as const },
      { input: { path: '/data/other.csv' } },
      { input: { size: 11 } },
      { input: { sha256: 'b'.repeat(64) } },
      { account: 'new' },
    ])
      expect(await adopt(await oldRun(o), api), JSON.stringify(o)).toBeUndefined();
    const stdin = { ...input, path: '-' };
    expect(await adopt(await oldRun({ input: stdin }), api, 'new', stdin)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('the same options journaled in another order are the same options', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    const rawOptions = { metadata: {}, account: journalAccount('old'), service: base.service };
    expect(await adopt(await oldRun({ rawOptions }), api)).toBe('old-run');
    expect(asked).toEqual(['job-0']);
  });

  it('a run whose journal cannot be read (moved meanwhile) is passed over', async () => {
    const { api, asked } = service(() => ({ state: 'pending' }));
    const runsDir = await oldRun();
    await rename(join(runsDir, 'old-run'), join(runsDir, 'moved'));
    expect(await adopt(runsDir, api)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('asks about a job not downloaded first; a job downloaded when none is left; never an expired or unaccepted one', async () => {
    const first = service(() => ({ state: 'pending' }));
    const runsDir = await oldRun({ then: [spooledEvent('0'), ...secondJob()] });
    expect(await adopt(runsDir, first.api)).toBe('old-run');
    expect(first.asked).toEqual(['job-1']);

    const spooled = service(() => ({ state: 'pending' }));
    expect(await adopt(await oldRun({ then: [spooledEvent('0')] }), spooled.api)).toBe('old-run');
    expect(spooled.asked).toEqual(['job-0']);

    const none = service(() => ({ state: 'pending' }));
    for (const o of [
      { then: [{ t: 'expired', batch: '0' } as NewEvent] },
      { expires: NOW }, // expires this very moment
    ])
      expect(await adopt(await oldRun(o), none.api), JSON.stringify(o)).toBeUndefined();
    // Sent, never accepted (unconfirmed): no job to ask about.
    const unaccepted = await oldRun({ then: [{ t: 'expired', batch: '0' }] });
    const j = await openJournal({
      runsDir: unaccepted,
      key: 'old-run',
      header: { kind: 'contacts', input, options: base, command: 'x' },
      restart: false,
      now: () => 3,
    });
    await j.append({ t: 'submit', batch: '2', first: 4, last: 4, count: 1, idem: 'i2' });
    await j.append({ t: 'unconfirmed', batch: '2', message: 'lost' });
    await j.close();
    expect(await adopt(unaccepted, none.api)).toBeUndefined();
    expect(none.asked).toEqual([]);
  });

  it('a 400 leaves the run alone; a 429, a 500, a network failure, an unreadable answer or a failure that is no answer of the service stops before deciding', async () => {
    const bad = service(httpError(400, 'API_VALIDATION'));
    expect(await adopt(await oldRun(), bad.api)).toBeUndefined();
    for (const [answer, code] of [
      [httpError(429, 'RATE_LIMITED'), 'RATE_LIMITED'],
      [httpError(500, 'SERVER_ERROR'), 'SERVER_ERROR'],
    ] as const) {
      const { api } = service(answer);
      await expect(adopt(await oldRun(), api)).rejects.toMatchObject({ code });
    }
    // The client's own failures carry no HTTP status (0) or a 2xx it could not read: no answer.
    for (const [status, code] of [
      [0, 'NETWORK'],
      [200, 'MALFORMED_RESPONSE'],
    ] as const) {
      const { api } = service(httpError(status, code));
      await expect(adopt(await oldRun(), api)).rejects.toMatchObject({ code });
    }
    const odd = Object.assign(new Error('socket hang up'), { status: 404 });
    const { api } = service(() => {
      throw odd;
    });
    await expect(adopt(await oldRun(), api)).rejects.toBe(odd);
  });
});
