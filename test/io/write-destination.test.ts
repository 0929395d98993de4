import { closeSync, openSync } from 'node:fs';
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import {
  createOutputWriter,
  type OutputRow,
  type OutputWriterOptions,
} from '../../src/io/write.js';
import { readFifo } from '../helpers/fifo.js';
import { rootTest } from '../helpers/root.js';

// The output writer's destinations (issue 21: mutants of write.ts that no test saw): what
// an atomic file, a stream target (a device, a pipe, /proc/self/fd/N) and stdout are left
// with after a close, an abort or a failure.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-dest-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const input = (cells: string[], index = 0): InputRow => ({ index, line: index + 2, cells });
const rowOf = (i: number, over: Partial<OutputRow> = {}): OutputRow => ({
  row: i + 1,
  input: input([`p${i}@acme.com`, `Name ${i}`], i),
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
  ...over,
});
const options = (o: Partial<OutputWriterOptions>): OutputWriterOptions => ({
  target: join(dir, 'out.csv'),
  format: 'csv',
  inputHeader: ['Email', 'Name'],
  jsonKeys: ['Email', 'Name'],
  extraColumns: [],
  ...o,
});
const csvOf = (n: number) =>
  ['Email,Name,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at']
    .concat(Array.from({ length: n }, (_, i) => `p${i}@acme.com,Name ${i},enriched,,true,`))
    .join('\n') + '\n';

/** The turn after the events of this one (an 'error' a stream emits on the next tick). */
const nextTurn = () => new Promise((ok) => setImmediate(ok));

async function writeRows(o: Partial<OutputWriterOptions>, n: number): Promise<void> {
  const w = await createOutputWriter(options(o));
  for (let i = 0; i < n; i++) await w.write(rowOf(i));
  await w.close();
}

describe('an atomic output over an existing file', () => {
  rootTest(
    '(root: chown) a writer that is not root keeps the mode but does not try to hand the file to its old owner (only root may)',
    async () => {
      const target = join(dir, 'owned.csv');
      await writeFile(target, 'old\n');
      await chown(target, 1234, 2345);
      await chmod(target, 0o640);
      const me = (await stat(dir)).uid;
      vi.spyOn(process, 'getuid').mockReturnValue(1000);
      await writeRows({ target }, 2);
      const st = await stat(target);
      expect([st.uid, st.mode & 0o777]).toEqual([me, 0o640]);
      expect(await readFile(target, 'utf8')).toBe(csvOf(2));
    },
  );

  it('on a platform without process.getuid (Windows), writing over an existing file works and keeps its mode', async () => {
    const target = join(dir, 'kept.csv');
    await writeFile(target, 'old\n');
    await chmod(target, 0o600);
    const getuid = Object.getOwnPropertyDescriptor(process, 'getuid');
    Object.defineProperty(process, 'getuid', { value: undefined, configurable: true });
    try {
      await writeRows({ target }, 1);
    } finally {
      if (getuid) Object.defineProperty(process, 'getuid', getuid);
    }
    expect(await readFile(target, 'utf8')).toBe(csvOf(1));
    expect((await stat(target)).mode & 0o777).toBe(0o600);
  });
});

describe('abort', () => {
  it('is no error when the temp file is already gone (its directory removed): there is nothing left to undo', async () => {
    const sub = join(dir, 'sub');
    await mkdir(sub);
    const w = await createOutputWriter(options({ target: join(sub, 'out.csv') }));
    await w.write(rowOf(0));
    await rm(sub, { recursive: true, force: true });
    await expect(w.abort()).resolves.toBeUndefined();
  });

  it('after a close keeps the output that close put in place', async () => {
    const target = join(dir, 'done.csv');
    const w = await createOutputWriter(options({ target }));
    await w.write(rowOf(0));
    await w.close();
    await w.abort();
    expect(await readFile(target, 'utf8')).toBe(csvOf(1));
    expect(await readdir(dir)).toEqual(['done.csv']);
  });

  it('of an output to a FIFO closes it, so its reader sees the end instead of waiting for ever', async () => {
    const fifo = join(dir, 'out.fifo');
    const reading = readFifo(fifo);
    const w = await createOutputWriter(options({ target: fifo, format: 'jsonl' }));
    await w.write(rowOf(0));
    await w.abort();
    await reading;
    expect((await stat(fifo)).isFIFO()).toBe(true);
  }, 10_000);
});

describe('a stream target (a device, a pipe, /proc/self/fd/N)', () => {
  it('is appended to, never truncated: a file the shell opened with >> keeps what it had', async () => {
    const file = join(dir, 'log.csv');
    await writeFile(file, 'before\n');
    const fd = openSync(file, 'a');
    try {
      await writeRows({ target: `/proc/self/fd/${fd}` }, 2);
    } finally {
      closeSync(fd);
    }
    expect(await readFile(file, 'utf8')).toBe(`before\n${csvOf(2)}`);
  });

  it('that cannot be opened (it names a directory) fails with FILE_SYSTEM naming it and the cause', async () => {
    const fd = openSync(dir, 'r');
    const target = `/proc/self/fd/${fd}`;
    try {
      await expect(createOutputWriter(options({ target }))).rejects.toMatchObject({
        code: 'FILE_SYSTEM',
        exitCode: 2,
        message: `cannot write ${target}: it is a directory`,
      });
    } finally {
      closeSync(fd);
    }
  });
});

describe('stdout', () => {
  it('a write after the output stream failed is refused at once: no row is taken for an output that is gone', async () => {
    const out = new PassThrough();
    const w = await createOutputWriter(options({ target: '-', stdout: out }));
    await w.write(rowOf(0));
    out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await nextTurn();
    await expect(w.write(rowOf(1))).rejects.toMatchObject({ code: 'OUTPUT_CLOSED' });
    await expect(w.close()).rejects.toMatchObject({ code: 'OUTPUT_CLOSED' });
  });

  it('once a write failed, close fails too (nothing reports success for a partial output)', async () => {
    const out = new PassThrough();
    out.resume();
    const w = await createOutputWriter(options({ target: '-', stdout: out, format: 'json' }));
    await w.write(rowOf(0));
    // A record JSON cannot write (a BigInt): the row is lost, so the output is incomplete.
    await expect(w.write(rowOf(1, { record: { n: 1n } }))).rejects.toMatchObject({
      code: 'FILE_SYSTEM',
    });
    await expect(w.close()).rejects.toMatchObject({ code: 'FILE_SYSTEM' });
  });

  it('gzip to stdout writes the whole gzip there and never ends stdout (its owner does)', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await writeRows({ target: '-', stdout: out, gzip: true }, 3);
    await nextTurn();
    expect(out.writableEnded).toBe(false);
    expect(gunzipSync(Buffer.concat(chunks)).toString('utf8')).toBe(csvOf(3));
  });
});

describe('a sink that cannot be opened', () => {
  it('(exceljs missing from a broken install) fails with FILE_SYSTEM and leaves no temp file', async () => {
    vi.doMock('exceljs', () => {
      throw new Error('Cannot find package exceljs');
    });
    vi.resetModules();
    try {
      const fresh = await import('../../src/io/write.js');
      const target = join(dir, 'out.xlsx');
      await expect(
        fresh.createOutputWriter(options({ target, format: 'xlsx' })),
      ).rejects.toMatchObject({
        code: 'FILE_SYSTEM',
        message: expect.stringContaining(`cannot write ${target}:`) as string,
      });
      expect(await readdir(dir)).toEqual([]);
    } finally {
      vi.doUnmock('exceljs');
      vi.resetModules();
    }
  });
});
