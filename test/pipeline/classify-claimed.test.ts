import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import type { CacheLookup } from '../../src/pipeline/run/cache-hits.js';
import {
  classifyClaimed,
  GROUP_ROWS,
  waitForRows,
  type ClaimsUse,
} from '../../src/pipeline/run/classify-claimed.js';
import type { RefillRow } from '../../src/pipeline/run/refill.js';
import { createBudget } from '../../src/pipeline/run/budget.js';
import { classifyRows, type ClassifyState } from '../../src/pipeline/run/classify.js';
import type { Holder, RowClaims } from '../../src/pipeline/run/row-claims.js';
import type { CachedAnswer } from '../../src/pipeline/types.js';

const run = (batchSize: number, dedupe = true) => ({
  kind: 'contacts' as const,
  mapping: { fields: { business_email: 0 } },
  validate: { header: ['Email'] },
  dedupe,
  idColumn: undefined,
  batchSize,
});

async function* rowsOf(emails: string[], read: number[] = []): AsyncGenerator<InputRow> {
  for (const [index, email] of emails.entries()) {
    read.push(index);
    yield { index, line: index + 2, cells: [email] } as InputRow;
  }
}

const answer = (email: string): CachedAnswer => ({
  records: [{ email, credit_charged: true }],
  at: 1,
  charged: true,
});

function addressOf(requestKey: string): string {
  return requestKey.slice(requestKey.indexOf('=') + 1);
}

/** A cache of answers by request key (contacts: the lower-cased address). */
function cacheOf(answers: Map<string, CachedAnswer>): CacheLookup {
  const find = (key: string) => answers.get(addressOf(key));
  return { fresh: find, any: find };
}

/**
 * Claims in memory: `others` holds rows another run sends (by claim key). `onSettle` plays
 * that run: it runs when this one waits, and says which rows are still held at the deadline.
 */
function fakeClaims(
  others: Map<string, Holder>,
  onSettle: () => void = () => undefined,
  onClaim: () => void = () => undefined,
) {
  const log: string[] = [];
  const claims: RowClaims = {
    async claim(keys, force) {
      log.push(`claim${force ? '!' : ''} ${keys.join(',')}`);
      onClaim();
      const held = new Map<string, Holder>();
      for (const k of keys) if (!force && others.has(k)) held.set(k, others.get(k) as Holder);
      return held;
    },
    async release(keys) {
      log.push(`release ${keys.join(',')}`);
    },
    async settle(keys, _deadline, answered) {
      log.push(`settle ${keys.join(',')}`);
      onSettle();
      return new Map(
        keys.flatMap((k) => (others.has(k) && !answered(k) ? [[k, others.get(k) as Holder]] : [])),
      );
    },
    async close() {},
  };
  return { claims, log };
}

/** The claim key the tests use: the address of a request key (`contacts\x01business_email=a@x.io`). */
const keyOf = addressOf;

async function classify(
  emails: string[],
  batchSize: number,
  state: ClassifyState,
  claims: { claims: RowClaims; log: string[] },
  over: Partial<ClaimsUse> = {},
  dedupe = true,
) {
  const out: string[] = [];
  const events = [];
  for await (const c of classifyClaimed(run(batchSize, dedupe), rowsOf(emails), state, {
    claims: claims.claims,
    keyOf,
    deadline: Date.now() + 60_000,
    now: Date.now,
    ...over,
  })) {
    events.push(c);
    if (c.t === 'batch') claims.log.push(`batch ${c.items.map((i) => i.index).join(',')}`);
    out.push(
      c.t === 'batch'
        ? `batch${c.no}:${c.items.map((i) => i.index).join(',')}`
        : c.t === 'hits'
          ? `hits<=${c.upTo}:${JSON.stringify(c.ranges)}`
          : c.t === 'resend'
            ? `resend:${c.rows.map((r) => r.row.index).join(',')}`
            : c.t === 'held'
              ? `held${c.row.index}:${c.answer ? 'answer' : c.heldBy ? `pid ${c.heldBy.pid}` : 'sent again'}`
              : `${c.t}${c.row.index}`,
    );
  }
  return { out, events };
}

describe('classifyClaimed: rows claimed before they are sent', () => {
  it('with no row held elsewhere, hands out exactly what classifyRows does, under a spending limit too: rows over it are journaled as no hits (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a@x.io', 'b@x.io', 'c@y.io', 'd@y.io', 'e@y.io', '', 'bad'), {
          maxLength: 60,
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
        fc.subarray(['a@x.io', 'c@y.io']),
        async (emails, size, limit, inCache) => {
          const cache = () => cacheOf(new Map(inCache.map((e) => [e, answer(e)])));
          const budgetOf = () => (limit === undefined ? {} : { budget: createBudget(limit, 1) });
          const state = { cache: cache(), ...budgetOf() };
          const plain = [];
          for await (const c of classifyRows(run(size), rowsOf(emails), state)) plain.push(c);
          const claimed = { cache: cache(), ...budgetOf() };
          const { events } = await classify(emails, size, claimed, fakeClaims(new Map()));
          expect(events).toEqual(plain);
          expect(claimed.budget?.left).toBe(state.budget?.left);
        },
      ),
    );
  });

  it('a row over the spending limit between two cache hits is journaled as no hit: a resume must not take it from the cache', async () => {
    const answers = new Map([
      ['a@x.io', answer('a@x.io')],
      ['c@x.io', answer('c@x.io')],
    ]);
    const budget = createBudget(0, 1);
    const { out } = await classify(
      ['a@x.io', 'b@x.io', 'c@x.io'],
      10,
      { cache: cacheOf(answers), budget },
      fakeClaims(new Map()),
    );
    expect(out).toEqual(['cached0', 'over-budget1', 'cached2', 'hits<=2:[[0,0],[2,2]]']);
  });

  it('a row another run sends is left out, journaled as a hit; the batch goes first, then the run waits, then takes the answer', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([['b@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others, () => {
      answers.set('b@x.io', answer('b@x.io')); // the other run's answer is in
      others.delete('b@x.io');
    });
    const { out } = await classify(
      ['a@x.io', 'b@x.io', 'c@x.io'],
      10,
      { cache: cacheOf(answers) },
      claims,
    );
    expect(out).toEqual(['hits<=2:[[1,1]]', 'batch0:0,2', 'send0', 'held1:answer', 'send2']);
    expect(claims.log).toEqual(['claim a@x.io,b@x.io,c@x.io', 'batch 0,2', 'settle b@x.io']);
  });

  it('a row whose claim ended with no answer is claimed again and sent; one still held at the deadline is not', async () => {
    const others = new Map([
      ['b@x.io', { pid: 42 }],
      ['c@x.io', { pid: 43 }],
    ]);
    const claims = fakeClaims(others, () => others.delete('b@x.io'));
    const { out, events } = await classify(
      ['a@x.io', 'b@x.io', 'c@x.io'],
      10,
      { cache: cacheOf(new Map()) },
      claims,
    );
    expect(out).toEqual([
      'hits<=2:[[1,2]]',
      'batch0:0',
      'resend:1',
      'send0',
      'held1:sent again',
      'held2:pid 43',
    ]);
    expect(claims.log).toEqual([
      'claim a@x.io,b@x.io,c@x.io',
      'batch 0',
      'settle b@x.io,c@x.io',
      'claim b@x.io',
    ]);
    const resend = events.find((e) => e.t === 'resend');
    expect(resend).toMatchObject({
      rows: [{ item: { index: 1, element: { business_email: 'b@x.io' } } }],
    });
  });

  it('a row answered after it was looked up, and given back before this run claimed it, is taken from the cache, not sent', async () => {
    // Regression: two runs each sending rows of the other's file paid 50 credits for 40 rows.
    const answers = new Map<string, CachedAnswer>();
    const claims = fakeClaims(new Map(), undefined, () => answers.set('b@x.io', answer('b@x.io')));
    const { out } = await classify(
      ['a@x.io', 'b@x.io', 'c@x.io'],
      3,
      { cache: cacheOf(answers) },
      claims,
    );
    expect(out).toEqual(['send0', 'cached1', 'send2', 'hits<=2:[[1,1]]', 'batch0:0,2']);
    expect(claims.log).toEqual(['claim a@x.io,b@x.io,c@x.io', 'release b@x.io', 'batch 0,2']);
  });

  it('a full batch whose rows all turned out answered is not sent empty: it goes on filling', async () => {
    const answers = new Map<string, CachedAnswer>();
    const claims = fakeClaims(new Map(), undefined, () => {
      for (const e of ['a@x.io', 'b@x.io']) answers.set(e, answer(e));
    });
    const { out } = await classify(
      ['a@x.io', 'b@x.io', 'c@x.io'],
      2,
      { cache: cacheOf(answers) },
      claims,
    );
    expect(out).toEqual([
      'cached0',
      'cached1',
      'hits<=1:[[0,1]]',
      'send2',
      'hits<=2:[]',
      'batch0:2',
    ]);
  });

  it('every row held: no batch is sent, the rows are answered from the cache', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([
      ['a@x.io', { pid: 42 }],
      ['b@x.io', { pid: 42 }],
    ]);
    const claims = fakeClaims(others, () => {
      for (const e of others.keys()) answers.set(e, answer(e));
    });
    const { out } = await classify(['a@x.io', 'b@x.io'], 10, { cache: cacheOf(answers) }, claims);
    expect(out).toEqual(['hits<=1:[[0,1]]', 'held0:answer', 'held1:answer']);
  });

  it('rows of a batch an earlier attempt journaled are claimed whoever holds them, never held back', async () => {
    const others = new Map([['a@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others);
    const { out } = await classify(
      ['a@x.io', 'b@x.io'],
      10,
      { cache: cacheOf(new Map()), journaledCount: (no) => (no === 0 ? 2 : undefined) },
      claims,
    );
    expect(out).toEqual(['send0', 'send1', 'hits<=1:[]', 'batch0:0,1']);
    expect(claims.log).toEqual(['claim! a@x.io,b@x.io', 'batch 0,1']);
  });

  it(`hands rows out a group of ${GROUP_ROWS} at most ahead of the reader, with no batch filling`, async () => {
    const emails = Array.from({ length: 3 * GROUP_ROWS }, (_, i) => `p${i}@x.io`);
    const answers = new Map(emails.map((e) => [e, answer(e)]));
    const read: number[] = [];
    const gen = classifyClaimed(
      run(100),
      rowsOf(emails, read),
      { cache: cacheOf(answers) },
      {
        claims: fakeClaims(new Map()).claims,
        keyOf,
        deadline: Date.now() + 60_000,
        now: Date.now,
      },
    );
    const first = await gen.next();
    expect(first.value).toMatchObject({ t: 'cached', row: { index: 0 } });
    expect(read.length).toBe(GROUP_ROWS);
    await gen.return(undefined);
  });
});

describe('classifyClaimed: which rows are held back', () => {
  it('with --no-dedupe, every copy of a row another run sends is held back, none paid for here', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([['b@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others, () => {
      answers.set('b@x.io', answer('b@x.io'));
      others.delete('b@x.io');
    });
    const { out } = await classify(
      ['a@x.io', 'b@x.io', 'b@x.io'],
      10,
      { cache: cacheOf(answers) },
      claims,
      {},
      false,
    );
    expect(out).toEqual(['hits<=2:[[1,2]]', 'batch0:0', 'send0', 'held1:answer', 'held2:answer']);
  });

  it('a cached row after a row another run sends stays a cache hit', async () => {
    const answers = new Map([['c@x.io', answer('c@x.io')]]);
    const others = new Map([['a@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others, () => {
      answers.set('a@x.io', answer('a@x.io'));
      others.delete('a@x.io');
    });
    const { out } = await classify(['a@x.io', 'c@x.io'], 10, { cache: cacheOf(answers) }, claims);
    expect(out).toEqual(['hits<=1:[[0,1]]', 'held0:answer', 'cached1']);
    expect(claims.log).toEqual(['claim a@x.io', 'settle a@x.io']);
  });

  it(`a batch is not handed out at a group's end (${GROUP_ROWS} rows): it fills up to its size`, async () => {
    const emails = Array.from({ length: GROUP_ROWS + 2 }, (_, i) => `p${i}@x.io`);
    const { events } = await classify(
      emails,
      2 * GROUP_ROWS,
      { cache: cacheOf(new Map()) },
      fakeClaims(new Map()),
    );
    const batches = events.flatMap((e) => (e.t === 'batch' ? [e.items.length] : []));
    expect(batches).toEqual([GROUP_ROWS + 2]);
  });

  it('the wait is told which rows are answered: it ends when their answer is in, not when their holder lets go', async () => {
    const answers = new Map<string, CachedAnswer>();
    const seen: boolean[] = [];
    const { claims, log } = fakeClaims(new Map([['b@x.io', { pid: 42 }]]));
    claims.settle = async (keys, _deadline, answered) => {
      log.push(`settle ${keys.join(',')}`);
      answers.set('b@x.io', answer('b@x.io'));
      seen.push(...keys.map(answered));
      return new Map(); // the holder still has it; this run stops waiting all the same
    };
    const { out } = await classify(['b@x.io'], 10, { cache: cacheOf(answers) }, { claims, log });
    expect(seen).toEqual([true]);
    expect(out).toEqual(['hits<=0:[[0,0]]', 'held0:answer']);
  });

  it('a holder from a build that names no run has no jobs to settle: its row is sent again', async () => {
    const others = new Map<string, Holder>([['b@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others, () => others.delete('b@x.io'));
    const settled: string[][] = [];
    const { out } = await classify(['b@x.io'], 10, { cache: cacheOf(new Map()) }, claims, {
      settleRuns: async (runs) => void settled.push(runs),
    });
    expect(settled).toEqual([]);
    expect(out).toEqual(['hits<=0:[[0,0]]', 'resend:0', 'held0:sent again']);
  });
});

describe('classifyClaimed: rows whose holder run ended without their answers', () => {
  const heldBy = (run: string, pid = 42) => new Map([['b@x.io', { pid, run }]]);

  it("that run's jobs are settled first (once), and a row they answer is taken from the cache, not sent", async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = heldBy('r1');
    // The holder's claim ends with no answer in the cache: its process died.
    const claims = fakeClaims(others, () => others.delete('b@x.io'));
    const settled: string[][] = [];
    const settleRuns = async (runs: string[]) => {
      settled.push(runs);
      answers.set('b@x.io', answer('b@x.io')); // its job downloaded: the answer is in
    };
    const { out } = await classify(['a@x.io', 'b@x.io'], 10, { cache: cacheOf(answers) }, claims, {
      settleRuns,
    });
    expect(settled).toEqual([['r1']]);
    expect(out).toEqual(['hits<=1:[[1,1]]', 'batch0:0', 'send0', 'held1:answer']);
    expect(claims.log).toEqual(['claim a@x.io,b@x.io', 'batch 0', 'settle b@x.io']);
  });

  it('a run already settled is not settled again when its rows are held once more; a row still unanswered is then sent', async () => {
    const others = heldBy('r1');
    let round = 0;
    const claims = fakeClaims(
      others,
      () => others.delete('b@x.io'),
      () => {
        // The run is resumed by another process, which claims the row again in between.
        if (++round === 2) others.set('b@x.io', { pid: 43, run: 'r1' });
      },
    );
    const settled: string[][] = [];
    const { out } = await classify(
      ['a@x.io', 'b@x.io'],
      10,
      { cache: cacheOf(new Map()) },
      claims,
      { settleRuns: async (runs) => void settled.push(runs) },
    );
    expect(settled).toEqual([['r1']]);
    expect(out).toEqual(['hits<=1:[[1,1]]', 'batch0:0', 'resend:1', 'send0', 'held1:sent again']);
    expect(claims.log).toEqual([
      'claim a@x.io,b@x.io',
      'batch 0',
      'settle b@x.io',
      'claim b@x.io',
      'settle b@x.io',
      'claim b@x.io',
    ]);
  });

  it('at the deadline, a row its settled run did not answer stays with that run: not sent', async () => {
    const others = heldBy('r1');
    const claims = fakeClaims(others, () => others.delete('b@x.io'));
    const settled: string[][] = [];
    let now = 1000;
    const { out } = await classify(
      ['a@x.io', 'b@x.io'],
      10,
      { cache: cacheOf(new Map()) },
      claims,
      {
        deadline: 2000,
        now: () => now,
        settleRuns: async (runs) => {
          settled.push(runs);
          now = 2000; // the download took until the deadline
        },
      },
    );
    expect(settled).toEqual([['r1']]);
    expect(out).toEqual(['hits<=1:[[1,1]]', 'batch0:0', 'send0', 'held1:pid 42']);
    expect(claims.log).toEqual(['claim a@x.io,b@x.io', 'batch 0', 'settle b@x.io']);
  });
});

describe('classifyClaimed and waitForRows: what the run says while it waits', () => {
  it('the run is told it waits, for how many rows and for whom, and when the wait is over', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([
      ['b@x.io', { pid: 42, run: 'r1' }],
      ['c@x.io', { pid: 42, run: 'r1' }],
    ]);
    const told: string[] = [];
    const claims = fakeClaims(others, () => {
      told.push('settling');
      for (const e of others.keys()) answers.set(e, answer(e));
    });
    await classify(['a@x.io', 'b@x.io', 'c@x.io'], 10, { cache: cacheOf(answers) }, claims, {
      onWaiting: (holder, rows) => told.push(`waiting ${rows} rows of pid ${holder.pid}`),
      onWaited: () => told.push('waited'),
    });
    expect(told).toEqual(['waiting 2 rows of pid 42', 'settling', 'waited']);
  });

  const refill = (index: number, email: string): RefillRow => ({
    row: { index, line: index + 2, cells: [email] } as InputRow,
    item: { index, key: `contacts\x01business_email=${email}`, element: { business_email: email } },
  });

  it('waitForRows: a row answered meanwhile is not sent, one whose claim ended is sent, one held at the deadline is returned with its holder', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([
      ['a@x.io', { pid: 42 }],
      ['b@x.io', { pid: 42 }],
      ['c@x.io', { pid: 43 }],
    ]);
    const claims = fakeClaims(others, () => {
      answers.set('a@x.io', answer('a@x.io'));
      others.delete('a@x.io');
      others.delete('b@x.io'); // ended with no answer
    });
    const held = new Map([
      ['a@x.io', { row: refill(0, 'a@x.io'), by: { pid: 42 } }],
      ['b@x.io', { row: refill(1, 'b@x.io'), by: { pid: 42 } }],
      ['c@x.io', { row: refill(2, 'c@x.io'), by: { pid: 43 } }],
    ]);
    const sent: number[][] = [];
    const told: string[] = [];
    const left = await waitForRows(
      held,
      {
        claims: claims.claims,
        keyOf,
        deadline: Date.now() + 60_000,
        now: Date.now,
        onWaiting: (h, rows) => told.push(`waiting ${rows} of pid ${h.pid}`),
        onWaited: () => told.push('waited'),
      },
      (request) => answers.get(addressOf(request)),
      async (rows) => void sent.push(rows.map((r) => r.row.index)),
    );
    expect(sent).toEqual([[1]]);
    expect(left).toEqual([{ row: held.get('c@x.io')?.row, by: { pid: 43 } }]);
    expect(told).toEqual(['waiting 3 of pid 42', 'waited']);
    expect(claims.log).toEqual(['settle a@x.io,b@x.io,c@x.io', 'claim b@x.io']);
  });

  it('waitForRows without hooks to tell waits all the same', async () => {
    const answers = new Map<string, CachedAnswer>();
    const others = new Map([['a@x.io', { pid: 42 }]]);
    const claims = fakeClaims(others, () => answers.set('a@x.io', answer('a@x.io')));
    const held = new Map([['a@x.io', { row: refill(0, 'a@x.io'), by: { pid: 42 } }]]);
    const left = await waitForRows(
      held,
      { claims: claims.claims, keyOf, deadline: Date.now() + 60_000, now: Date.now },
      (request) => answers.get(addressOf(request)),
      async () => undefined,
    );
    expect(left).toEqual([]);
    expect(claims.log).toEqual(['settle a@x.io']);
  });

  it('waitForRows with no row held waits for nothing and says nothing', async () => {
    const claims = fakeClaims(new Map());
    const told: string[] = [];
    const left = await waitForRows(
      new Map(),
      {
        claims: claims.claims,
        keyOf,
        deadline: Date.now() + 60_000,
        now: Date.now,
        onWaiting: () => told.push('waiting'),
        onWaited: () => told.push('waited'),
      },
      () => undefined,
      async () => undefined,
    );
    expect(left).toEqual([]);
    expect(told).toEqual([]);
    expect(claims.log).toEqual([]);
  });
});
