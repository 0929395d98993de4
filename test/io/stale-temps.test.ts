import { existsSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleTemps, tempNameFor } from '../../src/io/stale-temps.js';
import { createOutputWriter } from '../../src/io/write.js';
import { deadPid } from '../helpers/pids.js';

describe('stale output temp files (regression: a SIGKILL during the write left .out.csv.*.tmp behind)', () => {
  it('names temps after the writer pid', () => {
    expect(tempNameFor('out.csv', 0x1234, 'deadbeef')).toBe('.out.csv.00001234deadbeef.tmp');
  });

  it('removes the temps of dead writers only, and nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-stale-'));
    const dead = tempNameFor('out.csv', deadPid(), 'aaaaaaaa');
    const live = tempNameFor('out.csv', process.ppid, 'bbbbbbbb');
    const mine = tempNameFor('out.csv', process.pid, 'cccccccc');
    const other = tempNameFor('other.csv', deadPid(), 'dddddddd');
    const keep = [live, mine, other, 'out.csv', '.out.csv.12345678.tmp', '.out.csv.notes.tmp'];
    for (const f of [dead, ...keep]) await writeFile(join(dir, f), 'x');
    await removeStaleTemps(dir, 'out.csv');
    expect((await readdir(dir)).sort()).toEqual(keep.sort());
  });

  it('a new writer of the same output sweeps a dead writer temp, then writes atomically', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-stale-'));
    const stale = join(dir, tempNameFor('out.csv', deadPid(), '01234567'));
    await writeFile(stale, 'half a fi');
    const w = await createOutputWriter({
      target: join(dir, 'out.csv'),
      format: 'csv',
      inputHeader: ['a'],
      jsonKeys: ['a'],
      extraColumns: [],
    });
    expect(existsSync(stale)).toBe(false);
    await w.close();
    expect(await readdir(dir)).toEqual(['out.csv']);
  });

  it('ignores a directory it cannot list', async () => {
    await expect(removeStaleTemps('/nonexistent/enrich', 'out.csv')).resolves.toBeUndefined();
  });

  it('an output name too long for its temp name: the temp keeps its first bytes and a hash, and is still swept', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-stale-'));
    // 249 bytes, a two-byte character across the place the temp name cuts it.
    const long = `x${'é'.repeat(122)}.csv`;
    const sibling = `x${'é'.repeat(122)}.tsv`; // the same first bytes, another name
    expect(Buffer.byteLength(long)).toBe(249);
    const temp = tempNameFor(long, deadPid(), 'aaaaaaaa');
    expect(Buffer.byteLength(temp)).toBe(254); // the cut character left out whole
    expect(temp).not.toContain('\uFFFD');
    expect(temp.startsWith(`.x${'é'.repeat(107)}~`)).toBe(true);
    expect(tempNameFor(long, deadPid(), 'aaaaaaaa')).toBe(temp); // the same for every writer
    // A name that fits is kept whole, to the byte.
    const fits = `${'a'.repeat(229)}.csv`;
    expect(tempNameFor(fits, 1, 'bbbbbbbb')).toBe(`.${fits}.00000001bbbbbbbb.tmp`);
    expect(tempNameFor(`a${fits}`, 1, 'bbbbbbbb')).toContain('~');

    const live = tempNameFor(long, process.ppid, 'bbbbbbbb');
    const other = tempNameFor(sibling, deadPid(), 'cccccccc');
    for (const f of [temp, live, other]) await writeFile(join(dir, f), 'x');
    await removeStaleTemps(dir, long);
    expect((await readdir(dir)).sort()).toEqual([live, other].sort());

    // And such an output is written (its temp name was 271 bytes: ENAMETOOLONG).
    const w = await createOutputWriter({
      target: join(dir, long),
      format: 'csv',
      inputHeader: ['a'],
      jsonKeys: ['a'],
      extraColumns: [],
    });
    await w.close();
    expect((await readdir(dir)).sort()).toEqual([long, live, other].sort());
  });
});
