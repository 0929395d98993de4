import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import type { OutputRow, OutputWriterOptions } from '../../src/io/write-types.js';

// The sinks' guards (issue 21: mutants of write-sinks.ts that no test saw): how `drained`
// settles when the output stream drains, fails or closes, and cells no other test wrote.
// Each test imports the module afresh: its module-level helpers are then built under the
// mutant being tested, not once per test worker.
const sinks = async () => {
  vi.resetModules();
  return import('../../src/io/write-sinks.js');
};

/** The promise's state once pending events and callbacks of this turn have run. */
async function stateOf(p: Promise<void>): Promise<'pending' | 'resolved' | Error> {
  let state: 'pending' | 'resolved' | Error = 'pending';
  p.then(
    () => void (state = 'resolved'),
    (err: unknown) => void (state = err as Error),
  );
  await new Promise((ok) => setImmediate(ok));
  return state;
}

/** A stream that takes one chunk and holds it until `release` (its buffer is then full: no drain yet). */
function heldStream(o: { emitClose?: boolean } = {}) {
  let release: (() => void) | undefined;
  const stream = new Writable({
    highWaterMark: 1,
    ...o,
    write(_chunk, _enc, cb) {
      release = () => cb();
    },
  });
  const wrote = stream.write('x');
  expect(wrote).toBe(false);
  return { stream, release: () => release?.() };
}

const listeners = (s: Writable) =>
  ['drain', 'error', 'close'].map((e) => s.listenerCount(e)).join(',');

describe('drained', () => {
  it('asks no wait when the write was taken', async () => {
    const { drained } = await sinks();
    expect(drained(new PassThrough(), true)).toBeUndefined();
  });

  it('resolves on drain and leaves no listener behind, so waiting often never leaks', async () => {
    const { drained } = await sinks();
    const { stream, release } = heldStream();
    const before = listeners(stream);
    const wait = drained(stream, false) as Promise<void>;
    expect(await stateOf(wait)).toBe('pending');
    release();
    expect(await stateOf(wait)).toBe('resolved');
    expect(listeners(stream)).toBe(before);
  });

  it('rejects at once on a stream already closed, saying so, instead of waiting for a drain that never comes', async () => {
    const { drained } = await sinks();
    const stream = new PassThrough();
    stream.destroy();
    await new Promise((ok) => setImmediate(ok)); // its close event is past
    const state = await stateOf(drained(stream, false) as Promise<void>);
    expect(state).toBeInstanceOf(Error);
    expect((state as Error).message).toBe('the output stream was closed');
  });

  it('rejects at once with the error of a stream that already failed', async () => {
    const { drained } = await sinks();
    const stream = new PassThrough();
    stream.on('error', () => undefined);
    const enospc = Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' });
    stream.destroy(enospc);
    await new Promise((ok) => setImmediate(ok));
    expect(await stateOf(drained(stream, false) as Promise<void>)).toBe(enospc);
  });

  it('rejects with the error a stream fails with while waited on, even one that never emits close', async () => {
    const { drained } = await sinks();
    const { stream } = heldStream({ emitClose: false });
    stream.on('error', () => undefined);
    const before = listeners(stream);
    const wait = drained(stream, false) as Promise<void>;
    expect(await stateOf(wait)).toBe('pending');
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    stream.destroy(epipe);
    expect(await stateOf(wait)).toBe(epipe);
    expect(listeners(stream)).toBe(before);
  });

  it('rejects when the stream closes while waited on (no drain will come), saying it was closed', async () => {
    const { drained } = await sinks();
    const { stream } = heldStream();
    const before = listeners(stream);
    const wait = drained(stream, false) as Promise<void>;
    expect(await stateOf(wait)).toBe('pending');
    stream.destroy();
    const state = await stateOf(wait);
    expect(state).toBeInstanceOf(Error);
    expect((state as Error).message).toBe('the output stream was closed');
    expect(listeners(stream)).toBe(before);
  });
});

const input = (cells: string[], index = 0): InputRow => ({ index, line: index + 2, cells });
const rowOf = (over: Partial<OutputRow>): OutputRow => ({
  row: 1,
  input: input(['a@x.co', 'Ann']),
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
  ...over,
});
const opts = (o: Partial<OutputWriterOptions>): OutputWriterOptions => ({
  target: '-',
  format: 'csv',
  inputHeader: ['Email', 'Name'],
  jsonKeys: ['Email', 'Name'],
  extraColumns: [],
  ...o,
});

/** What a sink writes for `rows`. */
async function textOf(
  make: (
    o: OutputWriterOptions,
    out: Writable,
  ) => { write(r: OutputRow): Promise<void>; end(): Promise<void> },
  o: OutputWriterOptions,
  rows: OutputRow[],
): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const sink = make(o, out);
  for (const r of rows) await sink.write(r);
  await sink.end();
  return Buffer.concat(chunks).toString('utf8');
}

describe('the CSV sink', () => {
  it('writes booleans as true/false, numbers as written, and nothing for null', async () => {
    const { csvSink } = await sinks();
    const text = await textOf(csvSink, opts({ extraColumns: ['a', 'b', 'c', 'd'] }), [
      rowOf({ creditCharged: true, values: [true, false, 42, null] }),
      rowOf({ creditCharged: false, values: [false, true, 0, 'x'] }),
    ]);
    expect(text.split('\n').slice(1, 3)).toEqual([
      'a@x.co,Ann,enriched,,true,,true,false,42,',
      'a@x.co,Ann,enriched,,false,,false,true,0,x',
    ]);
  });

  it('keeps every caller column when one of them is named like a status column but they do not start with all four', async () => {
    const { csvSink } = await sinks();
    const text = await textOf(
      csvSink,
      opts({ extraColumns: ['first_name', 'enrich_error', 'enrich_credit_charged', 'x', 'y'] }),
      [rowOf({ values: ['Ann', 'e', 'c', 'x1', 'y1'] })],
    );
    expect(text.split('\n').slice(0, 2)).toEqual([
      'Email,Name,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,first_name,enrich_error,enrich_credit_charged,x,y',
      'a@x.co,Ann,enriched,,true,,Ann,e,c,x1,y1',
    ]);
  });
});

describe('the CSV sink holds one block of rows at most', () => {
  /** The stream writes a CSV sink makes before its end, for `n` rows of 8 cells (BLOCK_CELLS is a multiple). */
  async function writesBeforeEnd(n: number): Promise<{ writes: string[]; perBlock: number }> {
    const { csvSink, BLOCK_CELLS } = await sinks();
    const writes: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.toString('utf8'));
        cb();
      },
    });
    const sink = csvSink(opts({ extraColumns: ['a', 'b'] }), out);
    for (let i = 0; i < n; i++) await sink.write(rowOf({ row: i + 1, values: ['1', '2'] }));
    expect(BLOCK_CELLS % 8).toBe(0);
    return { writes, perBlock: BLOCK_CELLS / 8 };
  }

  it('a block goes out once it holds BLOCK_CELLS cells, not before, and the next starts empty', async () => {
    const { perBlock } = await writesBeforeEnd(0);
    const full = await writesBeforeEnd(3 * perBlock);
    expect(full.writes).toHaveLength(3);
    // The first block also carries the header line.
    expect(full.writes.map((w) => w.split('\n').length - 1)).toEqual([
      perBlock + 1,
      perBlock,
      perBlock,
    ]);
    expect((await writesBeforeEnd(3 * perBlock - 1)).writes).toHaveLength(2);
  });
});

describe('the JSON sink', () => {
  it('gives a short (ragged) row an empty string for each missing input key, so every object has every key', async () => {
    const { jsonSink } = await sinks();
    const text = await textOf(jsonSink, opts({ format: 'jsonl' }), [
      rowOf({ input: input(['only@x.co']), status: 'invalid', error: 'expected 2 cells, got 1' }),
    ]);
    expect((JSON.parse(text) as { input: unknown }).input).toEqual({
      Email: 'only@x.co',
      Name: '',
    });
  });
});
