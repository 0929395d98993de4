import { describe, expect, it } from 'vitest';
import type { InputRow, InputSource } from '../../src/io/read.js';
import type { JoinWriter } from '../../src/pipeline/join/join-writer.js';
import { CACHED_ROW, RowIndex } from '../../src/pipeline/join/row-index.js';
import { createStreamJoin, type StreamJoinOptions } from '../../src/pipeline/join/stream-join.js';
import type { TrailFeed } from '../../src/pipeline/join/trail.js';
import type { LeafResult } from '../../src/pipeline/types.js';

const row = (index: number): InputRow => ({ index, line: index + 2, cells: [`r${index}`] });

/** A writer that records what it is given and fails from the `failAt`-th row on. */
function fakeWriter(failAt = Infinity) {
  const rows: { index: number; status: string }[] = [];
  const stats = { statuses: {}, fill: {}, outputRows: 0 } as unknown as Awaited<
    ReturnType<JoinWriter['close']>
  >;
  const put = async (r: InputRow, status: string) => {
    await Promise.resolve();
    if (rows.length >= failAt) throw new Error('ENOSPC: no space left on device');
    rows.push({ index: r.index, status });
  };
  const writer: JoinWriter = {
    write: (r, outcome) => put(r, outcome.status),
    writeInvalid: (r) => put(r, 'invalid'),
    close: async () => stats,
    abort: async () => undefined,
  };
  return { writer, rows };
}

function join(writer: JoinWriter) {
  const source = { rows: () => [] } as unknown as InputSource;
  return createStreamJoin(
    {
      kind: 'contacts',
      mapping: {} as never,
      validate: { header: [] },
      dedupe: true,
      journalDir: '/nonexistent',
      reps: new RowIndex(),
      source,
    },
    writer,
    { windowRows: 100, keepOutcomes: 10, headWaitMs: 0 },
  );
}

const invalid = { ok: false as const, error: 'no identifier', column: undefined };

describe('createStreamJoin', () => {
  it('writes rows in order as soon as each one can be written', async () => {
    const { writer, rows } = fakeWriter();
    const j = join(writer);
    for (let i = 0; i < 5; i++) j.invalid(row(i), invalid);
    await j.room();
    await new Promise((r) => setTimeout(r, 0));
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(j.spilled).toBe(false);
  });

  it('a writer that fails stops the run with its error instead of retrying the row forever', async () => {
    const { writer, rows } = fakeWriter(3);
    const j = join(writer);
    let thrown: unknown;
    try {
      for (let i = 0; i < 1000 && thrown === undefined; i++) {
        j.invalid(row(i), invalid);
        await new Promise((r) => setTimeout(r, 0));
      }
    } catch (err) {
      thrown = err;
    }
    expect(String(thrown)).toMatch(/ENOSPC/);
    expect(rows).toHaveLength(3);
    await expect(
      j.finish({ leaves: [], dupCounts: new Map(), notSent: 'not sent' }),
    ).rejects.toThrow(/ENOSPC/);
  });
});

/** A writer that records each row's outcome. */
function recordingWriter() {
  const out: { index: number; status: string; error: string; charged: unknown }[] = [];
  const writer: JoinWriter = {
    write: async (r, o) =>
      void out.push({ index: r.index, status: o.status, error: o.error, charged: o.creditCharged }),
    writeInvalid: async (r, v) =>
      void out.push({ index: r.index, status: 'invalid', error: v.error, charged: null }),
    close: async () => ({ statuses: {}, fill: {}, outputRows: out.length }) as never,
    abort: async () => undefined,
  };
  return { writer, out };
}

/** A leaf that failed (its rows are written with its error; no spool to read). */
const failedLeaf = (first: number, last: number, error: string): LeafResult => ({
  id: `b${first}`,
  first,
  last,
  count: last - first + 1,
  state: 'failed',
  error,
  credits: 0,
  remaining: null,
  creditError: false,
  polls: 0,
  submits: 1,
});

/**
 * A join whose input can be read again (the trailing pass does) and whose rows the test
 * hands over as the first pass would: `reps` filled first, then the join told.
 */
function trailing(writer: JoinWriter, rows: number, opts: Partial<StreamJoinOptions> = {}) {
  const reps = new RowIndex();
  const reads = { opened: 0, closed: 0 };
  const source = {
    async *rows() {
      reads.opened++;
      try {
        for (let i = 0; i < rows; i++) yield row(i);
      } finally {
        reads.closed++;
      }
    },
  } as unknown as InputSource;
  const j = createStreamJoin(
    {
      kind: 'contacts',
      mapping: {} as never,
      validate: { header: [] },
      dedupe: true,
      journalDir: '/nonexistent',
      reps,
      source,
      cachedOutcome: (r) => ({
        status: 'enriched',
        error: `cache:${r.index}`,
        creditCharged: false,
        records: [],
      }),
    },
    writer,
    { windowRows: 2, keepOutcomes: 2, headWaitMs: 0, ...opts },
  );
  const hand = {
    sent(i: number, batch: number) {
      reps.push(i);
      j.sent(row(i), batch);
    },
    duplicate(i: number, rep: number) {
      reps.push(rep);
      j.duplicate(row(i), rep);
    },
    cached(i: number) {
      reps.push(CACHED_ROW);
      j.cached(row(i), { status: 'enriched', error: '', creditCharged: false, records: [] });
    },
  };
  return { j, hand, reads, reps };
}

const settle = () => new Promise((r) => setTimeout(r, 5));
const end = (notSent = 'not sent: budget') => ({ leaves: [], dupCounts: new Map(), notSent });

describe('the trailing pass (after a spill)', () => {
  it('writes each row as soon as its batch ends, while later jobs still run', async () => {
    const { writer, rows } = fakeWriter();
    const { j, hand, reads } = trailing(writer, 8);
    for (let i = 0; i < 8; i++) {
      hand.sent(i, i >> 1); // batches of two rows
      if (j.full()) await j.room(); // the head's job never ends in time: the window spills
    }
    expect(j.spilled).toBe(true);
    await settle();
    expect(rows).toEqual([]);
    j.batchDone(1, [failedLeaf(2, 3, 'e1')]); // not the head: nothing can be written yet
    await settle();
    expect(rows).toEqual([]);
    j.batchDone(0, [failedLeaf(0, 1, 'e0')]);
    await settle();
    // Rows 0-3 are written before the run ends; 4-7 wait for their jobs.
    expect(rows).toEqual([0, 1, 2, 3].map((index) => ({ index, status: 'failed' })));
    j.batchDone(2, [failedLeaf(4, 5, 'e2')]);
    j.batchDone(3, [failedLeaf(6, 7, 'e3')]);
    await settle();
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const stats = await j.finish(end());
    expect(stats.secondPassFrom).toBe(0);
    expect(rows).toHaveLength(8);
    expect(reads).toEqual({ opened: 1, closed: 1 });
  });

  it('writes duplicates, cached rows and rows never sent, in order, each with its outcome', async () => {
    const { writer, out } = recordingWriter();
    const { j, hand } = trailing(writer, 6);
    hand.sent(0, 0);
    hand.sent(1, 0);
    hand.duplicate(2, 0); // its first occurrence is not written yet
    await j.room(); // full, head waiting: spill
    expect(j.spilled).toBe(true);
    hand.cached(3);
    hand.duplicate(4, 1);
    hand.sent(5, -1); // past the budget: never sent
    j.batchDone(0, [{ ...failedLeaf(0, 1, 'gone'), state: 'expired' }]);
    await settle();
    expect(out.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]); // row 5 waits for the end
    const stats = await j.finish(end('not sent: over --max-credits'));
    expect(stats.secondPassFrom).toBe(0);
    expect(out).toEqual([
      { index: 0, status: 'expired', error: 'gone', charged: null },
      { index: 1, status: 'expired', error: 'gone', charged: null },
      { index: 2, status: 'expired', error: 'gone', charged: null },
      { index: 3, status: 'enriched', error: 'cache:3', charged: false },
      { index: 4, status: 'expired', error: 'gone', charged: null },
      { index: 5, status: 'failed', error: 'not sent: over --max-credits', charged: null },
    ]);
  });

  it("gives each row its own leaf's outcome, and 'not sent' to rows of a batch that ended without any", async () => {
    const { writer, out } = recordingWriter();
    const { j, hand } = trailing(writer, 8);
    for (let i = 0; i < 8; i++) hand.sent(i, i < 6 ? 0 : 1);
    await j.room();
    // A batch split in three, its leaves in no particular order.
    j.batchDone(0, [failedLeaf(2, 3, 'B'), failedLeaf(0, 1, 'A'), failedLeaf(4, 5, 'C')]);
    j.batchDone(1, []);
    await settle();
    expect(out.map((r) => `${r.index}:${r.status}:${r.error}`)).toEqual([
      '0:failed:A',
      '1:failed:A',
      '2:failed:B',
      '3:failed:B',
      '4:failed:C',
      '5:failed:C',
      '6:failed:not sent',
      '7:failed:not sent',
    ]);
  });

  it('waits for the first pass to hand a row over before writing it', async () => {
    const { writer, rows } = fakeWriter();
    const { j, hand } = trailing(writer, 6);
    for (let i = 0; i < 4; i++) hand.sent(i, i >> 1);
    await j.room();
    j.batchDone(0, [failedLeaf(0, 1, 'e0')]);
    j.batchDone(1, [failedLeaf(2, 3, 'e1')]);
    await settle();
    expect(rows).toHaveLength(4); // rows 4 and 5 are in the file, not yet handed over
    hand.sent(4, 2);
    hand.sent(5, 2);
    j.batchDone(2, [failedLeaf(4, 5, 'e2')]);
    await settle();
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]); // before the run's end
    await j.finish(end());
  });

  it('holds the outcome of a row whose duplicates were read, however far they come', async () => {
    const { writer, rows } = fakeWriter();
    // No batch read back for far duplicates: only what the pass holds answers them.
    const { j, hand } = trailing(writer, 6, { keepOutcomes: 1, windowRows: 1, farReadRows: -1e9 });
    hand.sent(0, 0);
    hand.duplicate(1, 0);
    await j.room();
    expect(j.spilled).toBe(true);
    hand.sent(2, 0);
    hand.sent(3, 1);
    hand.duplicate(4, 0); // three rows after row 0, of which the trailing pass keeps one
    hand.duplicate(5, 3);
    j.batchDone(0, [failedLeaf(0, 2, 'e0')]);
    j.batchDone(1, [failedLeaf(3, 3, 'e1')]);
    await settle();
    // Every row before the run's end: none needed the last pass.
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect((j as unknown as TrailFeed).dups.size).toBe(0); // nothing left held
    const stats = await j.finish(end());
    expect(stats.secondPassFrom).toBe(0);
  });

  it('keeps the outcomes of the last `keepOutcomes` rows for duplicates read after them', async () => {
    const { writer, rows } = fakeWriter();
    const { j, hand } = trailing(writer, 5, { keepOutcomes: 2, farReadRows: -1e9 });
    for (let i = 0; i < 3; i++) hand.sent(i, 0);
    await j.room();
    j.batchDone(0, [failedLeaf(0, 2, 'e0')]);
    await settle();
    expect(rows).toHaveLength(3);
    hand.duplicate(3, 1); // row 1 is one of the last two written
    await settle();
    expect(rows).toHaveLength(4);
    hand.duplicate(4, 0); // row 0 is not, and no batch may be read back: the last pass writes it
    await settle();
    expect(rows).toHaveLength(4);
    await j.finish({
      leaves: [failedLeaf(0, 2, 'e0')],
      dupCounts: new Map([
        [0, 1],
        [1, 1],
      ]),
      notSent: 'not sent',
    });
    expect(rows.map((r) => `${r.index}:${r.status}`)).toEqual([
      '0:failed',
      '1:failed',
      '2:failed',
      '3:failed',
      '4:failed',
    ]);
  });

  it("answers a duplicate read long after its first copy from that copy's batch, before the run ends", async () => {
    const { writer, out } = recordingWriter();
    const { j, hand } = trailing(writer, 11, { keepOutcomes: 1 });
    for (let i = 0; i < 6; i++) hand.sent(i, i >> 1);
    hand.cached(6);
    hand.sent(7, 3);
    await j.room();
    expect(j.spilled).toBe(true);
    j.batchDone(0, [failedLeaf(0, 1, 'e0')]);
    j.batchDone(1, []); // a batch that ended without any leaf
    j.batchDone(2, [failedLeaf(4, 4, 'e2a'), failedLeaf(5, 5, 'e2')]); // one split in two
    j.batchDone(3, [failedLeaf(7, 7, 'e3')]);
    await settle();
    expect(out).toHaveLength(8);
    // Rows 0, 3 and 5 are no longer held (only the last row written is): read back.
    hand.duplicate(8, 0);
    hand.duplicate(9, 3);
    hand.duplicate(10, 5);
    await settle();
    expect(
      out.slice(8).map((r) => `${r.index}:${r.status}:${r.error}:${String(r.charged)}`),
    ).toEqual(['8:failed:e0:null', '9:failed:not sent:null', '10:failed:e2:null']);
    const stats = await j.finish(end());
    expect(stats.secondPassFrom).toBe(0);
    expect(out).toHaveLength(11);
  });

  it('answers a duplicate of a cached row read long after it from the cache again', async () => {
    const { writer, out } = recordingWriter();
    const { j, hand } = trailing(writer, 4, { keepOutcomes: 1 });
    hand.cached(0);
    hand.sent(1, 0);
    await j.room();
    hand.sent(2, 0);
    j.batchDone(0, [failedLeaf(1, 2, 'e0')]);
    await settle();
    hand.duplicate(3, 0);
    await settle();
    expect(out.map((r) => `${r.index}:${r.status}:${r.error}:${String(r.charged)}`)).toEqual([
      '0:enriched::false', // written by the window, with the answer the first pass read
      '1:failed:e0:null',
      '2:failed:e0:null',
      '3:enriched:cache:3:false', // the cache answered the duplicate's own key (the same)
    ]);
  });

  it('stops reading batches back for far duplicates past its bound; the last pass writes the rest', async () => {
    const { writer, out } = recordingWriter();
    // The bound: rows of batches read back at most the rows written minus 20, here.
    const { j, hand } = trailing(writer, 43, { keepOutcomes: 1, farReadRows: -20 });
    for (let i = 0; i < 40; i++) hand.sent(i, 0);
    await j.room();
    const [a, b] = [failedLeaf(0, 19, 'A'), failedLeaf(20, 39, 'B')];
    j.batchDone(0, [b, a]); // a split batch's leaves, in no particular order
    await settle();
    expect(out).toHaveLength(40);
    hand.duplicate(40, 0); // reads A back: 20 rows, the bound 40 - 20 (just within it)
    hand.duplicate(41, 1); // A again, still at hand: nothing more read
    hand.duplicate(42, 20); // reads B back: 40 rows, the bound 42 - 20: past it
    await settle();
    expect(out.map((r) => r.index)).toEqual([...Array(42).keys()]);
    await j.finish({
      leaves: [a, b],
      dupCounts: new Map([
        [0, 1],
        [1, 1],
        [20, 1],
      ]),
      notSent: 'not sent',
    });
    expect(out.slice(40).map((r) => `${r.index}:${r.error}`)).toEqual(['40:A', '41:A', '42:B']);
  });

  it('a cancelled run stops a trailing pass that waits for a job, and closes its reading', async () => {
    const { writer, rows } = fakeWriter();
    const { j, hand, reads } = trailing(writer, 4);
    for (let i = 0; i < 4; i++) hand.sent(i, i >> 1);
    await j.room();
    await settle();
    expect(reads).toEqual({ opened: 1, closed: 0 }); // waiting for batch 0
    j.cancel();
    await settle();
    expect(reads).toEqual({ opened: 1, closed: 1 });
    await expect(j.finish(end())).rejects.toThrow(/stopped/);
    expect(rows).toEqual([]);
  });

  it("the trailing pass's write error fails the first pass at its next row", async () => {
    const { writer, rows } = fakeWriter(1);
    const { j, hand } = trailing(writer, 6);
    for (let i = 0; i < 4; i++) hand.sent(i, i >> 1);
    await j.room();
    j.batchDone(0, [failedLeaf(0, 1, 'e0')]);
    await settle();
    expect(rows).toHaveLength(1);
    expect(() => hand.sent(4, 2)).toThrow(/ENOSPC/);
    await expect(j.finish(end())).rejects.toThrow(/ENOSPC/);
  });
});
