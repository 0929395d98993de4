import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOutputWriter, type OutputRow } from '../../src/io/write.js';
import { writeUntilFailure } from '../helpers/write-until-failure.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-err-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const long = 'x'.repeat(1000);
const row = (i: number): OutputRow => ({
  row: i + 1,
  input: { index: i, line: i + 2, cells: [`r${i}@acme.com`, long] },
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
});
const open = (target: string, stdout?: Writable) =>
  createOutputWriter({
    target,
    format: 'csv',
    inputHeader: ['Email', 'Notes'],
    jsonKeys: ['Email', 'Notes'],
    extraColumns: [],
    ...(stdout ? { stdout } : {}),
  });

describe('every write error reaches the caller', () => {
  rootTest(
    '(root: a tmpfs) a full disk (1 MB tmpfs): FILE_SYSTEM naming the path and "disk full", no temp left, the old file kept',
    async () => {
      await withTmpfs('size=1m', async (small) => {
        const target = join(small, 'out.csv');
        await writeFile(target, 'old\n');
        const err = await writeUntilFailure(await open(target), 5000, row);
        expect(err).toMatchObject({
          code: 'FILE_SYSTEM',
          exitCode: 2,
          message: `cannot write ${target}: the disk is full (no space left on the device)`,
        });
        expect(await readdir(small)).toEqual(['out.csv']);
        expect(await readFile(target, 'utf8')).toBe('old\n');
      });
    },
  );

  it('a stream that errors mid-write (simulated ENOSPC) rejects the pending write at once instead of waiting for a drain', async () => {
    const failing = new Writable({
      highWaterMark: 16,
      write(_chunk, _enc, done) {
        setTimeout(
          () => done(Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' })),
          5,
        );
      },
    });
    const err = await writeUntilFailure(await open('-', failing), 5000, row);
    expect(err).toMatchObject({
      code: 'FILE_SYSTEM',
      message: expect.stringContaining('disk is full') as string,
    });
  });

  it('stdout closed early (| head -c 100): OUTPUT_CLOSED at once, not exit 0', async () => {
    const head = spawn('head', ['-c', '100'], { stdio: ['pipe', 'ignore', 'inherit'] });
    const started = Date.now();
    const err = await writeUntilFailure(await open('-', head.stdin), 100_000, row);
    expect(err).toMatchObject({ code: 'OUTPUT_CLOSED', exitCode: 2 });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a removed output directory: FILE_SYSTEM at close, not an internal error', async () => {
    const sub = join(dir, 'sub');
    await mkdir(sub);
    const w = await open(join(sub, 'out.csv'));
    await w.write(row(0));
    await rm(sub, { recursive: true, force: true });
    const err = await writeUntilFailure(w, 1, row);
    expect(err).toMatchObject({
      code: 'FILE_SYSTEM',
      message: expect.stringContaining(join(sub, 'out.csv')) as string,
    });
  });
});
