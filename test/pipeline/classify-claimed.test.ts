import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import type { CacheLookup } from '../../src/pipeline/run/cache-hits.js';
import { classifyClaimed, GROUP_ROWS } from '../../src/pipeline/run/classify-claimed.js';
import { classifyRows, type ClassifyState } from '../../src/pipeline/run/classify.js';
import type { Holder, RowClaims } from '../../src/pipeline/run/row-claims.js';
import type { CachedAnswer } from '../../src/pipeline/types.js';

const run = (batchSize: number) => ({
  kind: 'contacts' as const,
  mapping: { fields: { business_email: 0 } },
  validate: { header: ['Email'] },
  dedupe: true,
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
) {
  const out: string[] = [];
  const events = [];
  for await (const c of classifyClaimed(run(batchSize), rowsOf(emails), state, {
    claims: claims.claims,
    keyOf,
    deadline: Date.now() + 60_000,
    now: Date.now,
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
  it('with no row held elsewhere, hands out exactly what classifyRows does (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a@x.io', 'b@x.io', 'c@y.io', 'd@y.io', '', 'bad'), {
          maxLength: 60,
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.subarray(['a@x.io', 'c@y.io']),
        async (emails, size, inCache) => {
          const cache = cacheOf(new Map(inCache.map((e) => [e, answer(e)])));
          const plain = [];
          for await (const c of classifyRows(run(size), rowsOf(emails), { cache })) plain.push(c);
          const { events } = await classify(emails, size, { cache }, fakeClaims(new Map()));
          expect(events).toEqual(plain);
        },
      ),
    );
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
