import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, EnrichError } from '../../src/errors.js';
import { openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import { startBatch } from '../../src/pipeline/run/batch-task.js';
import type { BatchItem, BulkApi } from '../../src/pipeline/types.js';
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
});
