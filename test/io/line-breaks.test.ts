import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanFile } from '../../src/io/inspect-file.js';
import { openInput, type InputRow } from '../../src/io/read.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-lb-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rowsOf(path: string): Promise<InputRow[]> {
  const source = await openInput(path);
  const rows: InputRow[] = [];
  for await (const r of source.rows()) rows.push(r);
  await source.close();
  return rows;
}

// Far more than the 64 KiB sample, so the line breaks near the end are never seen by it.
const body = Array.from({ length: 3000 }, (_, i) => `r${i},"x, ${i}",é${i}`).join('\n');

describe('line breaks past the sample', () => {
  it('LF-only files parse the same with the LF-only fast path', async () => {
    const path = join(dir, 'lf.csv');
    await writeFile(path, `a,b,c\n${body}\n`);
    expect((await scanFile(path)).hasCr).toBe(false);
    const rows = await rowsOf(path);
    expect(rows).toHaveLength(3000);
    expect(rows[2999]).toMatchObject({
      index: 2999,
      line: 3001,
      cells: ['r2999', 'x, 2999', 'é2999'],
    });
  });

  it('a CRLF or lone CR after the sample still ends a row', async () => {
    const path = join(dir, 'mixed.csv');
    await writeFile(path, `a,b,c\n${body}\nlate,crlf,row\r\nlone,cr,row\rlast,lf,row\n`);
    expect((await scanFile(path)).hasCr).toBe(true);
    const rows = await rowsOf(path);
    expect(rows.slice(-3).map((r) => r.cells)).toEqual([
      ['late', 'crlf', 'row'],
      ['lone', 'cr', 'row'],
      ['last', 'lf', 'row'],
    ]);
    expect(rows.slice(-3).map((r) => r.line)).toEqual([3002, 3003, 3004]);
  });
});
