import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PassThrough } from 'node:stream';
import type * as Fs from 'node:fs';
import { closeSync, openSync, type WriteStream } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import type * as Zlib from 'node:zlib';
import type { Gzip } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../../src/io/atomic-write.js';
import { createOutputWriter, type OutputRow } from '../../src/io/write.js';

// What the output writer asks of the file system and of gzip, seen through pass-through
// wrappers (issue 21: mutants of write.ts that no test saw). Nothing here changes what the
// real functions do; the wrappers only record the calls.

const seen = vi.hoisted(() => ({
  events: [] as string[],
  gzips: [] as Gzip[],
  files: [] as WriteStream[],
}));

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  const createWriteStream: typeof real.createWriteStream = (...args) => {
    const file = real.createWriteStream(...args);
    seen.files.push(file);
    return file;
  };
  return { ...real, createWriteStream, default: { ...real, createWriteStream } };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const name = (p: unknown) => (String(p).endsWith('.tmp') ? 'temp' : basename(String(p)));
  const open: typeof real.open = async (...args) => {
    const fh = await real.open(...args);
    const sync = fh.sync.bind(fh);
    const close = fh.close.bind(fh);
    fh.sync = async () => {
      seen.events.push(`sync ${name(args[0])}`);
      return sync();
    };
    fh.close = async () => {
      seen.events.push(`close ${name(args[0])}`);
      return close();
    };
    return fh;
  };
  const rename: typeof real.rename = async (from, to) => {
    seen.events.push(`rename ${name(from)} -> ${name(to)}`);
    return real.rename(from, to);
  };
  return { ...real, open, rename, default: { ...real, open, rename } };
});

vi.mock('node:zlib', async (importOriginal) => {
  const real = await importOriginal<typeof Zlib>();
  const createGzip: typeof real.createGzip = (...args) => {
    const gzip = real.createGzip(...args);
    seen.gzips.push(gzip);
    return gzip;
  };
  return { ...real, createGzip, default: { ...real, createGzip } };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-durable-'));
  seen.events.length = 0;
  seen.gzips.length = 0;
  seen.files.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const row = (i: number): OutputRow => ({
  row: i + 1,
  input: { index: i, line: i + 2, cells: [`p${i}@acme.com`] },
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
});
const options = { format: 'csv', inputHeader: ['Email'], jsonKeys: ['Email'], extraColumns: [] };

describe('the output file on disk', () => {
  it('is flushed to disk (fsync) and its handle closed before the rename makes it the output: a crash never leaves a renamed, empty file; then the rename itself is flushed (its directory)', async () => {
    const target = join(dir, 'out.csv');
    const w = await createOutputWriter({ ...options, target, format: 'csv' });
    await w.write(row(0));
    await w.close();
    const d = basename(dir);
    expect(seen.events).toEqual([
      'sync temp',
      'close temp',
      'rename temp -> out.csv',
      `sync ${d}`,
      `close ${d}`,
    ]);
    expect(await readFile(target, 'utf8')).toContain('p0@acme.com');
  });

  it('writeFileAtomic (a saved mapping, jobs fetch -o) flushes its rename too', async () => {
    const target = join(dir, 'mapping.json');
    await writeFileAtomic(target, '{}');
    const d = basename(dir);
    expect(seen.events.slice(-3)).toEqual([
      'rename temp -> mapping.json',
      `sync ${d}`,
      `close ${d}`,
    ]);
    expect(await readFile(target, 'utf8')).toBe('{}');
  });
});

describe('gzip output', () => {
  it('a compressor that fails on its own refuses the next write at once: no row is taken for an output that is gone', async () => {
    const out = new PassThrough();
    out.resume();
    const w = await createOutputWriter({
      ...options,
      target: '-',
      format: 'csv',
      stdout: out,
      gzip: true,
    });
    await w.write(row(0));
    expect(seen.gzips).toHaveLength(1);
    seen.gzips[0]?.destroy(new Error('zlib: out of memory'));
    await new Promise((ok) => setImmediate(ok));
    await expect(w.write(row(1))).rejects.toMatchObject({
      code: 'FILE_SYSTEM',
      message: 'cannot write standard output: zlib: out of memory',
    });
  });

  it('a file that fails just as the compressed output ends reports its own cause (disk full), not a closed stream', async () => {
    // A stream target (a device, a pipe, a file the shell opened), whose undo is immediate.
    const fd = openSync(join(dir, 'out.csv.gz'), 'a');
    const target = `/proc/self/fd/${fd}`;
    try {
      const w = await createOutputWriter({ ...options, target, format: 'csv', gzip: true });
      await w.write(row(0));
      const [gzip] = seen.gzips;
      const [file] = seen.files;
      // Runs right after the writer's own 'end' listener, before its close goes on to end the file.
      gzip?.once('end', () =>
        file?.destroy(Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' })),
      );
      await expect(w.close()).rejects.toMatchObject({
        code: 'FILE_SYSTEM',
        message: `cannot write ${target}: the disk is full (no space left on the device)`,
      });
    } finally {
      closeSync(fd);
    }
  });
});
