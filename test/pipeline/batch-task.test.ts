import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, EnrichError } from '../../src/errors.js';
import { openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import { writeSpool } from '../../src/pipeline/journal/spool.js';
import { idempotencyKey, startBatch } from '../../src/pipeline/run/batch-task.js';
import { BLIND_SPLITS } from '../../src/pipeline/run/submit.js';
import { createBudget } from '../../src/pipeline/run/budget.js';
import { createFlightGate } from '../../src/pipeline/run/flight-gate.js';
import type { BatchContext } from '../../src/pipeline/run/batch-context.js';
import type { FlightWatch } from '../../src/pipeline/run/flight-gate.js';
import type {
  BatchItem,
  BulkApi,
  BulkKind,
  JobEvent,
  SendControl,
} from '../../src/pipeline/types.js';
import { batchContext } from '../helpers/batch-context.js';

// One batch task on its own (issue 21: mutants of batch-task.ts that no test saw): what it
// journals, when it stops the run, and what it never does (split forever, swallow Ctrl-C).

const header = {
  kind: 'contacts',
  input: { path: '/in.csv', size: 1, sha256: 'ab'.repeat(32) },
  options: {},
  command: 'enrich contacts in.csv',
};
let open: Journal[] = [];
afterEach(async () => {
  await Promise.all(open.map((j) => j.close()));
  open = [];
});
async function journal(): Promise<Journal> {
  const runsDir = await mkdtemp(join(tmpdir(), 'enrich-batch-task-'));
  const j = await openJournal({ runsDir, key: 'k', header, restart: false, now: () => 1 });
  open.push(j);
  return j;
}
const items = (n: number): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({
    index: i,
    element: { business_email: `p${i}@x.io`, custom_fields: { enrich_row: i } },
    key: `contacts\u0001business_email=p${i}@x.io`,
  }));
const accepted = (id: string) => ({
  job_id: id,
  download_url: `http://fake/${id}`,
  expiration_date: '4102444800',
  remaining_credits: 50,
});
const tooLarge = () =>
  new ApiError('API_PAYLOAD_TOO_LARGE', {
    status: 413,
    method: 'POST',
    path: '/contacts',
    message: 'POST /contacts: 413 Payload Too Large',
  });

describe('a batch task', () => {
  it('splits a batch refused as too large down to single rows, and no further (5 POSTs for 3 rows)', async () => {
    const j = await journal();
    const sizes: number[] = [];
    const api: BulkApi = {
      submit: async (_k, body) => {
        sizes.push(body.items.length);
        throw tooLarge();
      },
      results: async () => ({ state: 'pending' }),
    };
    const leaves = await startBatch(batchContext(j, api), '0', items(3), true).done;
    expect(sizes).toEqual([3, 2, 1, 1, 1]);
    expect(leaves.map((l) => [l.id, l.state, l.code])).toEqual([
      ['0.0.0', 'failed', 'API_PAYLOAD_TOO_LARGE'],
      ['0.0.1', 'failed', 'API_PAYLOAD_TOO_LARGE'],
      ['0.1', 'failed', 'API_PAYLOAD_TOO_LARGE'],
    ]);
    expect(j.state.batches.get('0')?.splitSize).toBe(2);
    expect(j.state.batches.get('0.0')?.splitSize).toBe(1);
    expect(leaves.map((l) => [l.first, l.last, l.count])).toEqual([
      [0, 0, 1],
      [1, 1, 1],
      [2, 2, 1],
    ]);
  });

  it('a 400 that does not say why is halved too: the one row the service refuses is found, the rest sent (regression: the whole batch failed)', async () => {
    const j = await journal();
    const sizes: number[] = [];
    const refused = () =>
      new ApiError('API_VALIDATION', {
        status: 400,
        method: 'POST',
        path: '/contacts',
        message: '400 Bad Request: Request rejected. Check: contacts',
      });
    const api: BulkApi = {
      submit: async (_k, body) => {
        sizes.push(body.items.length);
        const emails = body.items.map((i) => (i as { business_email: string }).business_email);
        if (emails.includes('p2@x.io') || body.items.length > 4) throw refused();
        return accepted(`job-${sizes.length}`);
      },
      results: async () => ({ state: 'pending' }),
    };
    const ctx = batchContext(j, api, { wait: false });
    const leaves = await startBatch(ctx, '0', items(6), true).done;
    // 6 -> 3 + 3; 3 (p0..p2) -> 2 + 1; 2 (p0, p1) accepted; 1 (p2) refused; 3 (p3..p5) accepted.
    expect(sizes).toEqual([6, 3, 2, 1, 3]);
    expect(leaves.map((l) => [l.first, l.last, l.state])).toEqual([
      [0, 1, 'pending'],
      [2, 2, 'failed'],
      [3, 5, 'pending'],
    ]);
    expect(ctx.splits).toEqual({ accepted: true, blind: 2 });
  });

  it('a service that refuses every batch with a 400 is not halved past the blind allowance', async () => {
    const j = await journal();
    let posts = 0;
    const api: BulkApi = {
      submit: async () => {
        posts++;
        throw new ApiError('API_VALIDATION', {
          status: 400,
          method: 'POST',
          path: '/contacts',
          message: '400 Bad Request',
        });
      },
      results: async () => ({ state: 'pending' }),
    };
    const ctx = batchContext(j, api, { splits: { accepted: false, blind: BLIND_SPLITS - 2 } });
    const leaves = await startBatch(ctx, '0', items(8), true).done;
    // Two halvings left: 8 -> 4 (-> refused, no more) + 4... each part one POST once spent.
    expect(posts).toBe(5);
    expect(leaves.every((l) => l.state === 'failed' && l.code === 'API_VALIDATION')).toBe(true);
    expect(leaves.map((l) => l.count)).toEqual([2, 2, 4]);
    expect(ctx.splits.blind).toBe(BLIND_SPLITS);
  });

  it('Ctrl-C while polling ends the run as interrupted, never as a pending batch', async () => {
    const j = await journal();
    const abort = new AbortController();
    let polls = 0;
    const api: BulkApi = {
      submit: async () => accepted('job-1'),
      results: async () => {
        polls++;
        abort.abort();
        return { state: 'pending', retryAfterMs: 1000 };
      },
    };
    const ctx = batchContext(j, api);
    ctx.env = { ...ctx.env, signal: abort.signal };
    await expect(startBatch(ctx, '0', items(2), true).done).rejects.toMatchObject({
      code: 'INTERRUPTED',
    });
    expect(polls).toBe(1);
    // The job stays journaled as accepted: the next run polls it again.
    expect(j.state.batches.get('0')).toMatchObject({ job: 'job-1' });
    expect(j.state.batches.get('0')?.failed).toBeUndefined();
  });

  it('counts the credits the records say were charged, and stops the run when the answer shows the account dry', async () => {
    const j = await journal();
    const stops: string[] = [];
    const api: BulkApi = {
      submit: async () => accepted('job-2'),
      results: async () => ({
        state: 'done',
        remainingCredits: 0,
        records: [
          { error: '', credit_charged: true, email: 'a', custom_fields: { enrich_row: 0 } },
          { error: '', credit_charged: true, email: 'b', custom_fields: { enrich_row: 1 } },
          { error: 'no credits', credit_charged: false, custom_fields: { enrich_row: 2 } },
        ],
      }),
    };
    const ctx = batchContext(j, api, { stop: (code) => void stops.push(code) });
    const [leaf] = await startBatch(ctx, '0', items(3), true).done;
    expect(leaf).toMatchObject({ state: 'spooled', credits: 2, remaining: 0, creditError: true });
    expect(leaf).toMatchObject({ jobId: 'job-2', submits: 1, polls: 1, count: 3 });
    expect(stops).toEqual(['CREDITS_EXHAUSTED']);
    expect(j.state.batches.get('0')?.spooled).toEqual({
      records: 3,
      credits: 2,
      remaining: 0,
      creditError: true,
      unsure: false,
    });
    expect(ctx.balance.report()).toMatchObject({
      first: { remaining: 50 },
      last: { remaining: 0 },
    });
  });

  it('a batch whose answer is complete and the account not dry stops nothing', async () => {
    const j = await journal();
    const stops: string[] = [];
    const api: BulkApi = {
      submit: async () => accepted('job-3'),
      results: async () => ({
        state: 'done',
        remainingCredits: 40,
        records: [{ error: 'No match', credit_charged: false, custom_fields: { enrich_row: 0 } }],
      }),
    };
    const ctx = batchContext(j, api, { stop: (code) => void stops.push(code) });
    const [leaf] = await startBatch(ctx, '0', items(1), true).done;
    expect(leaf).toMatchObject({ state: 'spooled', credits: 0, creditError: false });
    expect(stops).toEqual([]);
  });

  it.each([
    ['NETWORK', true],
    ['AUTH_INVALID', true],
    ['API_CONFLICT', false],
    // No such endpoint: a wrong base URL, which every other batch would meet too.
    ['API_NOT_FOUND', true],
  ] as const)(
    'a POST failing with %s: the batch fails, journaled; stops the run: %s',
    async (code, stopsRun) => {
      const j = await journal();
      const stops: string[] = [];
      const api: BulkApi = {
        submit: async () => {
          throw new EnrichError(code, `POST /contacts: ${code}`);
        },
        results: async () => ({ state: 'pending' }),
      };
      const ctx = batchContext(j, api, { stop: (c) => void stops.push(c) });
      const [leaf] = await startBatch(ctx, '0', items(2), true).done;
      expect(leaf).toMatchObject({ state: 'failed', code, submits: 1 });
      expect(leaf?.error).toContain(`POST /contacts: ${code}`);
      expect(j.state.batches.get('0')?.failed).toEqual({
        code,
        message: `POST /contacts: ${code}`,
      });
      expect(stops).toEqual(stopsRun ? [code] : []);
    },
  );

  it('a POST whose answer was lost is journaled unconfirmed with its cause, and not sent again by the next run', async () => {
    const j = await journal();
    let posts = 0;
    const api: BulkApi = {
      submit: async () => {
        posts++;
        throw new EnrichError('UNCONFIRMED', 'POST /contacts: may have been processed', {
          cause: new Error('socket hang up'),
        });
      },
      results: async () => ({ state: 'pending' }),
    };
    const [leaf] = await startBatch(batchContext(j, api), '0', items(2), true).done;
    expect(leaf).toMatchObject({ state: 'unconfirmed', code: 'UNCONFIRMED', submits: 1 });
    expect(leaf?.error).toContain('socket hang up');
    expect(j.state.batches.get('0')?.unconfirmed).toEqual({ message: 'socket hang up' });
    const [again] = await startBatch(batchContext(j, api), '0', items(2), false).done;
    expect(again).toMatchObject({ state: 'unconfirmed', submits: 0 });
    expect(posts).toBe(1);
    // Sent again when asked, or to a service that honours idempotency keys, with the same key.
    const keys: string[] = [];
    const honest: BulkApi = {
      submit: async (_k, _b, key) => {
        keys.push(key);
        return accepted('job-4');
      },
      honoursIdempotency: () => true,
      results: async () => ({ state: 'done', remainingCredits: 9, records: [] }),
    };
    const [resent] = await startBatch(batchContext(j, honest), '0', items(2), false).done;
    expect(resent).toMatchObject({ state: 'spooled', jobId: 'job-4' });
    expect(keys).toEqual([j.state.batches.get('0')?.idem]);
  });

  it('the idempotency key: 40 hex digits, stable for a run, new for another nonce or batch', () => {
    const key = idempotencyKey('run', 'nonce', '0');
    expect(key).toMatch(/^enrich-[0-9a-f]{40}$/);
    expect(idempotencyKey('run', 'nonce', '0')).toBe(key);
    expect(idempotencyKey('run', 'other', '0')).not.toBe(key);
    expect(idempotencyKey('run', 'nonce', '1')).not.toBe(key);
  });

  it('a failed POST leaves no credit error on its leaf', async () => {
    const api: BulkApi = {
      submit: async () => {
        throw new EnrichError('API_CONFLICT', 'POST /contacts: 409');
      },
      results: async () => ({ state: 'pending' }),
    };
    const [leaf] = await startBatch(batchContext(await journal(), api), '0', items(1), true).done;
    expect(leaf).toMatchObject({ state: 'failed', creditError: false, credits: 0, polls: 0 });
  });

  it('journals split, unconfirmed and spooled events durably (flushed to disk)', async () => {
    const j = await journal();
    const seen: string[] = [];
    const watched: Journal = {
      ...j,
      state: j.state,
      append: (event, o) => {
        seen.push(`${event.t}:${o?.durable === true}`);
        return j.append(event, o);
      },
    };
    let n = 0;
    const api: BulkApi = {
      submit: async (_k, body) => {
        if (body.items.length > 1) throw tooLarge();
        if (n++ === 0) throw new EnrichError('UNCONFIRMED', 'lost', { cause: new Error('reset') });
        return accepted('job-s');
      },
      results: async () => ({ state: 'done', remainingCredits: 5, records: [] }),
    };
    await startBatch(batchContext(watched, api), '0', items(2), true).done;
    expect(seen).toEqual(
      expect.arrayContaining(['split:true', 'unconfirmed:true', 'spooled:true', 'accepted:true']),
    );
  });

  it("a split batch's parts were paid when its rows were classified: sent even with the budget spent", async () => {
    const budget = createBudget(2, 1);
    budget.left = 0; // the classification took these two rows' credits
    const sent: number[] = [];
    const api: BulkApi = {
      submit: async (_k, body) => {
        if (body.items.length > 1) throw tooLarge();
        sent.push(body.items.length);
        return accepted(`job-${sent.length}`);
      },
      results: async () => ({ state: 'done', remainingCredits: 5, records: [] }),
    };
    const ctx = batchContext(await journal(), api, { budget });
    const leaves = await startBatch(ctx, '0', items(2), true).done;
    expect(leaves.map((l) => l.state)).toEqual(['spooled', 'spooled']);
    expect(sent).toEqual([1, 1]);
  });

  it('a batch not sent because the run stopped says why, and nothing is POSTed', async () => {
    let posts = 0;
    const api: BulkApi = {
      submit: async () => {
        posts++;
        return accepted('x');
      },
      results: async () => ({ state: 'pending' }),
    };
    const ctx = batchContext(await journal(), api, {
      stopped: () => 'not sent: the key was refused',
    });
    const leaves = await startBatch(ctx, '0', items(2), true).done;
    expect(leaves).toEqual([
      expect.objectContaining({ id: '0', state: 'unsent', error: 'not sent: the key was refused' }),
    ]);
    expect(posts).toBe(0);
  });

  it.each([
    ['NETWORK', ['NETWORK']],
    ['API_CONFLICT', []],
  ] as const)(
    'a results download failing with %s: the batch stays pending (stops the run: %j)',
    async (code, stops) => {
      const stopped: string[] = [];
      const api: BulkApi = {
        submit: async () => accepted('job-p'),
        results: async () => {
          throw new EnrichError(code, `GET results: ${code}`);
        },
      };
      const ctx = batchContext(await journal(), api, { stop: (c) => void stopped.push(c) });
      const leaves = await startBatch(ctx, '0', items(1), true).done;
      expect(leaves).toEqual([
        expect.objectContaining({ state: 'pending', code, polls: 1, jobId: 'job-p' }),
      ]);
      expect(leaves[0]?.error).toContain(`GET results: ${code}`);
      expect(stopped).toEqual(stops);
    },
  );

  it('results gone (404) well past their expiry: the batch is journaled expired, and a later run does not ask again', async () => {
    const j = await journal();
    let gets = 0;
    const api: BulkApi = {
      submit: async () => ({ ...accepted('job-e'), expiration_date: '1' }),
      results: async () => {
        gets++;
        throw new ApiError('API_NOT_FOUND', {
          status: 404,
          method: 'GET',
          path: '/contacts/results/job-e.json',
          message: 'gone',
        });
      },
    };
    const env = { now: () => 10_000_000, sleep: async () => undefined, random: () => 0.5 };
    const leaves = await startBatch(batchContext(j, api, { env }), '0', items(1), true).done;
    expect(leaves).toEqual([expect.objectContaining({ state: 'expired', jobId: 'job-e' })]);
    expect(leaves[0]?.error).toMatch(/^results of job job-e expired before they were downloaded/);
    expect(j.state.batches.get('0')?.expired).toBe(true);
    const again = await startBatch(batchContext(j, api, { env }), '0', items(1), false).done;
    expect(again).toEqual([expect.objectContaining({ state: 'expired', jobId: 'job-e' })]);
    expect(again[0]?.error).toMatch(/^results of job job-e expired/);
    expect(gets).toBe(1);
  });
});

describe('a batch an earlier run journaled', () => {
  const noCalls = (): BulkApi & { calls: string[] } => {
    const calls: string[] = [];
    return {
      calls,
      submit: async () => {
        calls.push('POST');
        return accepted('job-new');
      },
      results: async (_k: BulkKind, jobId: string, url: string) => {
        calls.push(`GET ${jobId} ${url}`);
        return { state: 'done', remainingCredits: 3, records: [] };
      },
    };
  };
  const submit = (j: Journal, batch: string, count = 1) =>
    j.append({ t: 'submit', batch, first: 0, last: count - 1, count, idem: `idem-${batch}` });
  const REFUSED = {
    t: 'failed',
    batch: '0',
    code: 'NETWORK',
    message: 'connection refused',
  } as const;
  /** Batch 0 journaled as sent, then refused before anything reached the service. */
  const refusedOnce = async (j: Journal) => {
    await submit(j, '0');
    await j.append(REFUSED);
  };

  it('split: its parts are taken from the journal, nothing is sent again', async () => {
    const j = await journal();
    await submit(j, '0', 2);
    await j.append({ t: 'split', batch: '0', size: 1 });
    for (const part of ['0.0', '0.1']) {
      await submit(j, part);
      await j.append({ t: 'accepted', batch: part, job: `job-${part}`, url: 'u', expires: null });
      await j.append({
        t: 'spooled',
        batch: part,
        records: 1,
        credits: 1,
        remaining: 7,
        creditError: false,
        unsure: false,
      });
    }
    const api = noCalls();
    const leaves = await startBatch(batchContext(j, api), '0', items(2), false).done;
    expect(leaves.map((l) => [l.id, l.state, l.credits, l.creditsEarlier])).toEqual([
      ['0.0', 'spooled', 1, 1],
      ['0.1', 'spooled', 1, 1],
    ]);
    expect(api.calls).toEqual([]);
  });

  it('accepted: its job is polled at the journaled download URL (empty when none was kept), not sent again', async () => {
    const j = await journal();
    await submit(j, '0');
    await j.append({
      t: 'accepted',
      batch: '0',
      job: 'job-a',
      url: 'http://fake/a.json',
      expires: null,
    });
    await submit(j, '1');
    await j.append({
      t: 'accepted',
      batch: '1',
      job: 'job-b',
      url: undefined as never,
      expires: null,
    });
    const api = noCalls();
    await startBatch(batchContext(j, api), '0', items(1), false).done;
    await startBatch(batchContext(j, api), '1', items(1), false).done;
    expect(api.calls).toEqual(['GET job-a http://fake/a.json', 'GET job-b ']);
  });

  it.each([
    [
      'submitted by a run killed before the answer came',
      undefined,
      'the run stopped before the answer came',
    ],
    [
      'failed for a reason that proves nothing (INTERNAL)',
      'INTERNAL',
      'the run stopped before the answer came',
    ],
  ])('%s: unconfirmed, not sent again', async (_what, failed, why) => {
    const j = await journal();
    await submit(j, '0');
    if (failed) await j.append({ t: 'failed', batch: '0', code: failed, message: 'boom' });
    const api = noCalls();
    const [leaf] = await startBatch(batchContext(j, api), '0', items(1), false).done;
    expect(leaf).toMatchObject({ state: 'unconfirmed' });
    expect(leaf?.error).toContain(`(${why})`);
    expect(api.calls).toEqual([]);
  });

  it('unconfirmed with a cause: the row says the cause', async () => {
    const j = await journal();
    await submit(j, '0');
    await j.append({ t: 'unconfirmed', batch: '0', message: 'socket hang up' });
    const [leaf] = await startBatch(batchContext(j, noCalls()), '0', items(1), false).done;
    expect(leaf?.error).toContain('(socket hang up)');
  });

  it('unconfirmed once, then resent on request and failed (NETWORK): still unconfirmed, never sent a third time', async () => {
    // The first POST may have reached the service; the second failing proves nothing of it.
    const j = await journal();
    await submit(j, '0');
    await j.append({ t: 'unconfirmed', batch: '0', message: 'socket hang up' });
    await j.append(REFUSED);
    const api = noCalls();
    const [leaf] = await startBatch(batchContext(j, api), '0', items(1), false).done;
    expect(leaf).toMatchObject({ state: 'unconfirmed' });
    expect(api.calls).toEqual([]);
  });

  it('a journaled batch that --max-credits no longer pays for: not sent, and the run stops at its budget', async () => {
    const j = await journal();
    await refusedOnce(j);
    const stops: unknown[] = [];
    const api = noCalls();
    const ctx = batchContext(j, api, {
      budget: createBudget(1, 1),
      stop: (...args) => void stops.push(args),
    });
    const [leaf] = await startBatch(ctx, '0', items(2), false).done;
    expect(leaf).toMatchObject({ state: 'unsent' });
    expect(stops).toEqual([['CREDITS_EXHAUSTED', expect.stringContaining('1'), true]]);
    expect(api.calls).toEqual([]);
  });

  it('failed before anything reached the service (NETWORK): sent again, with its journaled key', async () => {
    const j = await journal();
    await refusedOnce(j);
    const keys: string[] = [];
    const api: BulkApi = {
      submit: async (_k, _b, key) => {
        keys.push(key);
        return accepted('job-n');
      },
      results: async () => ({ state: 'done', remainingCredits: 3, records: [] }),
    };
    const [leaf] = await startBatch(batchContext(j, api), '0', items(1), false).done;
    expect(leaf).toMatchObject({ state: 'spooled', jobId: 'job-n' });
    expect(keys).toEqual(['idem-0']);
  });
});

describe('what a batch task tells the progress line and the flight gate', () => {
  /** Records the job events and the flight gate's calls, in the order they came. */
  function watching(o: Partial<BatchContext> = {}) {
    const seen: unknown[] = [];
    const flight: FlightWatch = {
      accepted: (id, resumed, records) => void seen.push(['accepted', id, resumed, records]),
      pending: (id, ms) => void seen.push(['pending', id, ms]),
      ended: (id, done) => void seen.push(['ended', id, done]),
      jobTimes: { fastest: () => undefined, watch: () => () => undefined },
    };
    return { seen, o: { ...o, flight, onJob: (e: JobEvent) => void seen.push(e) } };
  }
  const job = { batch: '0', job: 'job-e' };

  it('a job accepted, running (with and without progress), then done', async () => {
    const answers: Awaited<ReturnType<BulkApi['results']>>[] = [
      { state: 'pending', processed: 400, total: 1000, retryAfterMs: 2000 },
      { state: 'pending', processed: 0, total: 0 },
      { state: 'pending', total: 1000 },
      { state: 'pending' },
      {
        state: 'done',
        remainingCredits: 9,
        records: [0, 1].map((i) => ({
          error: '',
          credit_charged: i === 0,
          custom_fields: { enrich_row: i },
        })),
      },
    ];
    const api: BulkApi = {
      submit: async () => accepted('job-e'),
      results: async () => answers.shift() as never,
    };
    const w = watching();
    await startBatch(batchContext(await journal(), api, w.o), '0', items(2), true).done;
    expect(w.seen).toStrictEqual([
      { t: 'submitted', ...job, rows: 2 },
      ['accepted', '0', false, 2],
      { t: 'pending', ...job, processed: 400, total: 1000 },
      ['pending', '0', 2000],
      { t: 'pending', ...job },
      ['pending', '0', undefined],
      { t: 'pending', ...job }, // a total without a count of what is processed: no progress
      ['pending', '0', undefined],
      { t: 'pending', ...job },
      ['pending', '0', undefined],
      ['ended', '0', true],
      { t: 'done', ...job, records: 2, credits: 1 },
    ]);
  });

  it('a download that fails, a job still running at the deadline, results gone', async () => {
    let posts = 0;
    const failing: BulkApi = {
      submit: async () => {
        posts++;
        return accepted('job-e');
      },
      results: async () => {
        throw new EnrichError('API_CONFLICT', 'GET: 409');
      },
    };
    const failed = watching();
    const [unread] = await startBatch(
      batchContext(await journal(), failing, failed.o),
      '0',
      items(1),
      true,
    ).done;
    // Its job is kept to download later: its rows are never sent again for it (nor as a credit retry).
    expect(posts).toBe(1);
    expect(unread).toMatchObject({ state: 'pending', code: 'API_CONFLICT', jobId: 'job-e' });
    expect(unread?.retry).toBeUndefined();
    expect(failed.seen).toStrictEqual([
      { t: 'submitted', ...job, rows: 1 },
      ['accepted', '0', false, 1],
      ['ended', '0', false],
      { t: 'ended', ...job, state: 'failed' },
    ]);

    const running: BulkApi = {
      submit: failing.submit,
      results: async () => ({ state: 'pending' }),
    };
    const late = watching({ deadline: 0 });
    await startBatch(batchContext(await journal(), running, late.o), '0', items(1), true).done;
    expect(late.seen).toStrictEqual([
      { t: 'submitted', ...job, rows: 1 },
      ['accepted', '0', false, 1],
      { t: 'pending', ...job },
      ['pending', '0', undefined],
      ['ended', '0', false],
      { t: 'ended', ...job, state: 'timeout' },
    ]);

    // A job an earlier run journaled, whose results expired long ago: taken over, then gone.
    const j = await journal();
    await j.append({ t: 'submit', batch: '0', first: 0, last: 0, count: 1, idem: 'idem-0' });
    await j.append({ t: 'accepted', batch: '0', job: 'job-e', url: 'http://fake/e', expires: 1 });
    const gone: BulkApi = {
      submit: failing.submit,
      results: async () => {
        throw new ApiError('API_NOT_FOUND', {
          status: 404,
          method: 'GET',
          path: '/e',
          message: 'gone',
        });
      },
    };
    const old = watching();
    const ctx = batchContext(j, gone, old.o);
    ctx.env = { ...ctx.env, now: () => 86_400_000 };
    const [leaf] = await startBatch(ctx, '0', items(1), false).done;
    expect(leaf?.state).toBe('expired');
    expect(old.seen).toStrictEqual([
      ['accepted', '0', true, undefined],
      ['ended', '0', false],
      { t: 'ended', ...job, state: 'expired' },
    ]);
  });

  it('a batch refused as too large: sent again in two parts, each its own job', async () => {
    let posts = 0;
    const api: BulkApi = {
      submit: async () => {
        if (posts++ === 0) throw tooLarge();
        return accepted(`job-${posts}`);
      },
      results: async () => ({ state: 'done', remainingCredits: 5, records: [] }),
    };
    const w = watching();
    await startBatch(batchContext(await journal(), api, w.o), '0', items(3), true).done;
    expect(w.seen.filter((e) => !Array.isArray(e))).toStrictEqual([
      { t: 'retried', batch: '0', rows: 3, reason: 'too-large' },
      { t: 'submitted', batch: '0.0', job: 'job-2', rows: 2 },
      { t: 'done', batch: '0.0', job: 'job-2', records: 0, credits: 0 },
      { t: 'submitted', batch: '0.1', job: 'job-3', rows: 1 },
      { t: 'done', batch: '0.1', job: 'job-3', records: 0, credits: 0 },
    ]);
  });
});

describe('a batch task with no one to tell of its job', () => {
  it('a 404 before its results are due (not yet expired) is polled again, and the job downloaded', async () => {
    const answers = [
      () => {
        throw new ApiError('API_NOT_FOUND', {
          status: 404,
          method: 'GET',
          path: '/j',
          message: '404',
        });
      },
      () => ({
        state: 'done' as const,
        remainingCredits: 9,
        records: [{ error: '', credit_charged: true, custom_fields: { enrich_row: 0 } }],
      }),
    ];
    const api: BulkApi = {
      submit: async () => accepted('job-n'),
      results: async () => (answers.shift() as () => never)(),
    };
    const ctx = batchContext(await journal(), api);
    expect(ctx.onJob).toBeUndefined();
    const [leaf] = await startBatch(ctx, '0', items(1), true).done;
    expect(leaf).toMatchObject({ state: 'spooled', credits: 1 });
    expect(answers).toEqual([]);
  });
});

describe("a batch task's memory while its job runs", () => {
  // A collection the test can ask for (vitest does not start node with --expose-gc).
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;

  it('lets go of the request elements once the job is accepted, and still files each answer under its row key', async () => {
    const j = await journal();
    const batch = items(3);
    const elements = batch.map((i) => new WeakRef(i.element));
    let pending = true;
    let polledWhileRunning!: () => void;
    const running = new Promise<void>((r) => (polledWhileRunning = r));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const api: BulkApi = {
      submit: async () => accepted('job-m'),
      results: async () => {
        if (!pending)
          return {
            state: 'done',
            remainingCredits: 40,
            records: [0, 1, 2].map((i) => ({
              error: '',
              credit_charged: true,
              email: `e${i}`,
              custom_fields: { enrich_row: i },
            })),
          };
        polledWhileRunning();
        return { state: 'pending', retryAfterMs: 1000 };
      },
    };
    const filed: [number, string][] = [];
    const ctx = batchContext(j, api, {
      // A poll that waits for the test: the job is in flight while the test collects.
      env: {
        now: () => 1_000,
        sleep: () => finished,
        random: () => 0.5,
      },
      remember: (sent, records) => {
        for (const [n, s] of sent.entries()) filed.push([s.index, `${s.key} ${records[n]?.email}`]);
      },
    });
    const done = startBatch(ctx, '0', batch.splice(0), true).done;
    await running;
    for (let k = 0; k < 3; k++) {
      collect();
      await new Promise((r) => setImmediate(r));
    }
    const held = elements.filter((e) => e.deref() !== undefined).length;
    pending = false;
    finish();
    const [leaf] = await done;
    expect(held).toBe(0);
    expect(leaf).toMatchObject({ state: 'spooled', first: 0, last: 2, count: 3, credits: 3 });
    expect(filed).toEqual([
      [0, 'contacts\u0001business_email=p0@x.io e0'],
      [1, 'contacts\u0001business_email=p1@x.io e1'],
      [2, 'contacts\u0001business_email=p2@x.io e2'],
    ]);
  });
});

describe("a batch task's polls, with no Retry-After", () => {
  it('land when a job of its size is due: the time of a job at least as large, not of a smaller one', async () => {
    let t = 0;
    const sleeps: number[] = [];
    const env = {
      now: () => t,
      sleep: async (ms: number) => void (sleeps.push(ms), (t += ms)),
      random: () => 0.5,
    };
    const flight = createFlightGate({ fixed: 4, cap: 32, now: () => t });
    // Earlier jobs of this run: one of 1,000 records took 4.5 s, a last batch of 10 took 0.1 s.
    flight.accepted('full', false, 1000);
    flight.accepted('last', false, 10);
    t = 100;
    flight.ended('last', true);
    t = 4500;
    flight.ended('full', true);
    const start = t;
    const api: BulkApi = {
      submit: async () => accepted('job-1'),
      results: async () =>
        t - start >= 4500
          ? { state: 'done', records: [], remainingCredits: 50 }
          : { state: 'pending' },
    };
    const ctx = batchContext(await journal(), api, { env, flight });
    const [leaf] = await startBatch(ctx, '0', items(500), true).done;
    expect(leaf?.state).toBe('spooled');
    // A second apart while young, then the poll lands at 4.5 s (the 1,000-record job's time).
    expect(sleeps).toEqual([1000, 1000, 1000, 1000, 500]);
  });
});

// F1: an answer's `remaining_credits` is the balance when it is downloaded, not while its job
// ran. A record not charged and without data read with a balance not seen to hold meanwhile
// (a top-up, a refill, a download by another process) may be one the job skipped for credits.
describe('an answer whose balance may not have held while its job ran', () => {
  const NONE = { error: 'Nothing found', credit_charged: false };
  const answer = (remainingCredits: number) => ({
    state: 'done' as const,
    remainingCredits,
    records: [
      { error: '', credit_charged: true, email: 'a', custom_fields: { enrich_row: 0 } },
      { ...NONE, custom_fields: { enrich_row: 1 } },
    ],
  });

  it.each([
    ['the balance rose after the submission (5, then 1000)', 5, 1000, true],
    ['the submission showed no balance', undefined, 40, true],
    ['it held (50, then 40)', 50, 40, false],
  ] as const)(
    'a job this process sent, when %s: unsure %s',
    async (_when, atSubmit, atDownload, unsure) => {
      const j = await journal();
      const stops: string[] = [];
      const kept: (number | null)[] = [];
      const api: BulkApi = {
        submit: async () => ({ ...accepted('job-u'), remaining_credits: atSubmit }),
        results: async () => answer(atDownload),
      };
      const ctx = batchContext(j, api, {
        stop: (code) => void stops.push(code),
        remember: (_items, _records, remaining) => void kept.push(remaining),
      });
      const [leaf] = await startBatch(ctx, '0', items(2), true).done;
      expect(j.state.batches.get('0')?.spooled).toMatchObject({ creditError: false, unsure });
      // The account is not dry: nothing stops the run.
      expect(stops).toEqual([]);
      if (!unsure) {
        expect(leaf).toMatchObject({ state: 'spooled', creditError: false });
        expect(leaf?.retry).toBeUndefined();
        expect(kept).toEqual([atDownload]);
        return;
      }
      // Its rows without data are the shortage's until a retry answers them: not cached as
      // no-match, failed saying why, and the run partial (the retry goes with the next run).
      expect(kept).toEqual([0]);
      expect(leaf).toMatchObject({
        state: 'spooled',
        creditError: true,
        retry: {
          state: 'unsent',
          batch: '0.c1',
          error: expect.stringMatching(/perhaps for lack of credits/),
        },
      });
    },
  );

  it('a job an earlier run sent: its rows without data are sent once more at once, as a credit retry, and its answer is final', async () => {
    const j = await journal();
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'idem-0' });
    await j.append({ t: 'accepted', batch: '0', job: 'job-0', url: 'u0', expires: null });
    const sent: unknown[][] = [];
    const api: BulkApi = {
      submit: async (_k, body) => {
        sent.push(body.items);
        return accepted('job-r');
      },
      results: async (_k, jobId) =>
        jobId === 'job-0'
          ? answer(1000)
          : // The retry: still no match, with credits left: final.
            {
              state: 'done',
              remainingCredits: 990,
              records: [{ ...NONE, custom_fields: { enrich_row: 1 } }],
            },
    };
    const ctx = batchContext(j, api);
    const [leaf] = await startBatch(ctx, '0', items(2), false).done;
    expect(sent).toEqual([[items(2)[1]?.element]]);
    expect(j.state.batches.get('0')?.spooled).toMatchObject({ unsure: true });
    expect(leaf).toMatchObject({
      state: 'spooled',
      creditError: false,
      extra: [{ id: '0.c1', remaining: 990 }],
    });
    expect(leaf?.retry).toBeUndefined();
    // A later run reads both answers back and sends nothing.
    const again = await startBatch(batchContext(j, api), '0', items(2), false).done;
    expect(again[0]).toMatchObject({ creditError: false, extra: [{ id: '0.c1' }] });
    expect(sent).toHaveLength(1);
  });

  it('a credit retry downloaded by another process is final: never sent again for that', async () => {
    const j = await journal();
    const dry = { ...NONE, error: 'quota', custom_fields: { enrich_row: 1 } };
    await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'idem-0' });
    await writeSpool(j.dir, '0', [answer(0).records[0], dry]);
    await j.append({
      t: 'spooled',
      batch: '0',
      records: 2,
      credits: 1,
      remaining: 0,
      creditError: true,
      unsure: false,
    });
    // Its retry, sent by an earlier run and not downloaded.
    await j.append({ t: 'submit', batch: '0.c1', first: 1, last: 1, count: 1, idem: 'idem-c1' });
    await j.append({ t: 'accepted', batch: '0.c1', job: 'job-c1', url: 'u1', expires: null });
    let submits = 0;
    const api: BulkApi = {
      submit: async () => {
        submits++;
        return accepted('never');
      },
      results: async () => ({
        state: 'done',
        remainingCredits: 1000,
        records: [{ ...NONE, custom_fields: { enrich_row: 1 } }],
      }),
    };
    const [leaf] = await startBatch(batchContext(j, api), '0', items(2), false).done;
    expect(submits).toBe(0);
    expect(leaf).toMatchObject({ creditError: false, extra: [{ id: '0.c1', remaining: 1000 }] });
  });

  it.each([
    ['of an earlier build (not known)', {}, 1],
    ['that held', { unsure: false }, 0],
  ] as const)(
    'a journaled answer %s: its rows without data are sent once more: %s job(s)',
    async (_what, flag, jobs) => {
      const j = await journal();
      await j.append({ t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: 'idem-0' });
      await writeSpool(j.dir, '0', answer(1000).records);
      await j.append({
        t: 'spooled',
        batch: '0',
        records: 2,
        credits: 1,
        remaining: 1000,
        creditError: false,
        ...flag,
      });
      let submits = 0;
      const api: BulkApi = {
        submit: async () => {
          submits++;
          return accepted('job-r');
        },
        results: async () => ({
          state: 'done',
          remainingCredits: 990,
          records: [{ ...NONE, custom_fields: { enrich_row: 1 } }],
        }),
      };
      const [leaf] = await startBatch(batchContext(j, api), '0', items(2), false).done;
      expect(submits).toBe(jobs);
      expect(leaf).toMatchObject({ state: 'spooled', creditError: false });
    },
  );
});

describe('a batch journaled around each attempt, by a transport that can tell them (journalsAttempts)', () => {
  /** The journal's events of batch '0', as written to the file (its header left out). */
  const events = async (j: Journal) =>
    (await readFile(j.path, 'utf8'))
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .map(({ at: _at, ...e }) => e);

  it('an attempt never made (refused unprocessed, a wait past the deadline) leaves no submit line, only why; one made is journaled before it goes; Ctrl-C reaches the wait', async () => {
    const j = await journal();
    const signal = new AbortController().signal;
    const seen: { stop?: AbortSignal; lines: Record<string, unknown>[][] } = { lines: [] };
    const submit = Object.assign(
      async (_k: unknown, _b: unknown, _i: unknown, how?: SendControl) => {
        seen.stop = how?.stop;
        await how?.hooks?.notSent({ code: 'RATE_LIMITED', message: '429: wait 3600 s' });
        seen.lines.push(await events(j)); // before any attempt went out
        await how?.hooks?.sending();
        seen.lines.push(await events(j)); // as the attempt goes out
        throw new EnrichError('SERVER_ERROR', 'POST /contacts: 503');
      },
      { journalsAttempts: true },
    );
    const api: BulkApi = {
      submit,
      results: async () => ({ state: 'done', records: [], remainingCredits: 1 }),
    };
    const env = { now: () => 1, sleep: async () => undefined, random: () => 0.5, signal };
    const [leaf] = await startBatch(batchContext(j, api, { env }), '0', items(2), true).done;
    expect(seen.stop).toBe(signal);
    const refused = { t: 'failed', batch: '0', code: 'RATE_LIMITED', message: '429: wait 3600 s' };
    expect(seen.lines[0]).toEqual([refused]);
    expect(seen.lines[1]).toEqual([
      refused,
      { t: 'submit', batch: '0', first: 0, last: 1, count: 2, idem: expect.any(String) },
    ]);
    expect(leaf).toMatchObject({ state: 'failed', code: 'SERVER_ERROR' });
  });
});
