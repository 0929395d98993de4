import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { sniffDialect } from '../../src/io/sniff-dialect.js';

// Many read chunks: CRLFs and quoted newlines fall on chunk boundaries somewhere.
describe('streaming a file larger than the read chunk', () => {
  let dir: string;
  let file: string;
  const N = 30_000;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'enrich-large-'));
    file = join(dir, 'large.csv');
    const lines = ['id,email,note'];
    for (let i = 0; i < N; i++)
      lines.push(
        i % 7 === 0 ? `${i},u${i}@x.example,"two\r\nlines"` : `${i},u${i}@x.example,plain ${i}`,
      );
    await writeFile(file, lines.join('\r\n') + '\r\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads every row once, in order, with exact start lines, twice over', async () => {
    const source = await openInput(file);
    for (let pass = 0; pass < 2; pass++) {
      let expectedLine = 2;
      let count = 0;
      const wrong: string[] = [];
      for await (const row of source.rows()) {
        if (row.index !== count || row.cells[0] !== String(count) || row.line !== expectedLine) {
          wrong.push(
            `row ${count}: index ${row.index}, id ${row.cells[0]}, line ${row.line} (expected ${expectedLine})`,
          );
        }
        expectedLine += count % 7 === 0 ? 2 : 1;
        count++;
      }
      expect(wrong.slice(0, 3)).toEqual([]);
      expect(count).toBe(N);
    }
    await source.close();
  });
});

describe('encoding detection beyond the sample', () => {
  it('a Windows-1252 byte after the first 64 KiB still switches the decoder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-1252-'));
    try {
      const file = join(dir, 'late.csv');
      const ascii = Buffer.from('email,name\n' + 'a@b.co,plain\n'.repeat(8000));
      await writeFile(
        file,
        Buffer.concat([
          ascii,
          Buffer.from([
            0x72, 0x65, 0x6e, 0xe9, 0x40, 0x78, 0x2e, 0x63, 0x6f, 0x2c, 0x52, 0x65, 0x6e, 0xe9,
            0x0a,
          ]),
        ]),
      );
      const source = await openInput(file);
      expect(source.dialect.encoding).toBe('windows-1252');
      let last: string[] = [];
      for await (const row of source.rows()) last = row.cells;
      expect(last).toEqual(['rené@x.co', 'René']);
      await source.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a UTF-8 character split across read chunks stays UTF-8', async () => {
    const { scanFile } = await import('../../src/io/inspect-file.js');
    const dir = await mkdtemp(join(tmpdir(), 'enrich-utf8-'));
    try {
      const file = join(dir, 'split.csv');
      await writeFile(
        file,
        Buffer.concat([Buffer.alloc(1024 * 1024 - 1, 0x61), Buffer.from('é€😀', 'utf8')]),
      );
      expect((await scanFile(file)).utf8).toBe(true);
      await writeFile(file, Buffer.concat([Buffer.alloc(10, 0x61), Buffer.from([0xe2, 0x82])]));
      expect((await scanFile(file)).utf8).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('sniffDialect', () => {
  it('does not mistake data rows with a trailing empty cell for the header', () => {
    expect(sniffDialect('a,b,c\n1,2,3,\n4,5,6,\n7,8,9,\n').headerLine).toBe(1);
  });
  it('prefers the delimiter that splits every row the same way', () => {
    expect(sniffDialect('name|note\nAcme|a, b, c\nGlobex|d; e\n').delimiter).toBe('|');
    expect(sniffDialect('name\tnote\nAcme\ta, b\n').delimiter).toBe('\t');
  });
  it('treats a one-column file as one column', () => {
    expect(sniffDialect('email\njane@acme.com\n')).toEqual({
      delimiter: ',',
      headerLine: 1,
      sepLine: false,
    });
  });
  it('accepts a quoted "sep=" line', () => {
    expect(sniffDialect('"sep=|"\na|b\n1|2\n')).toEqual({
      delimiter: '|',
      headerLine: 2,
      sepLine: true,
    });
  });
});
