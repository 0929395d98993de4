import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { sniffDialect } from '../../src/io/sniff-dialect.js';
import { allRows } from './read-helpers.js';

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
      expect(source.warnings).toEqual([]); // plain 1252: nothing to warn about
      let last: string[] = [];
      for await (const row of source.rows()) last = row.cells;
      expect(last).toEqual(['rené@x.co', 'René']);
      await source.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('warns when a file read as Windows-1252 also holds UTF-8 characters (two exports pasted together)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-mixed-'));
    try {
      const file = join(dir, 'mixed.csv');
      const utf8 = Buffer.from('email,name\n' + 'jose@b.co,José\n'.repeat(8000));
      // One Windows-1252 "é" (E9) past the 64 KiB sample.
      await writeFile(file, Buffer.concat([utf8, Buffer.from([0x72, 0x2c, 0x52, 0xe9, 0x0a])]));
      const source = await openInput(file);
      expect(source.dialect.encoding).toBe('windows-1252');
      expect(source.warnings).toEqual([
        expect.stringMatching(/mixed\.csv is not valid UTF-8 throughout.*"Ã©".*--encoding utf-8/),
      ]);
      await source.close();
      const forced = await openInput(file, { encoding: 'utf-8' });
      expect(forced.warnings).toEqual([]);
      const rows: string[][] = [];
      for await (const row of forced.rows()) rows.push(row.cells);
      expect(rows[0]).toEqual(['jose@b.co', 'José']);
      expect(rows.at(-1)).toEqual(['r', 'R\uFFFD']);
      await forced.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a UTF-8 BOM over bytes that are no UTF-8 is said, in the sample or past it, and --encoding windows-1252 reads it with the BOM skipped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-bom1252-'));
    try {
      const bom = Buffer.from([0xef, 0xbb, 0xbf]);
      const short = join(dir, 'short.csv');
      await writeFile(
        short,
        Buffer.concat([
          bom,
          Buffer.from('Email,Name\na@acme.com,Ren'),
          Buffer.from([0xe9]),
          Buffer.from(' Dupont\n'),
        ]),
      );
      const long = join(dir, 'long.csv');
      const body = Buffer.from('Email,Name\n' + 'jose@b.co,José\n'.repeat(8000));
      await writeFile(
        long,
        Buffer.concat([bom, body, Buffer.from([0x72, 0x2c, 0x52, 0xe9, 0x0a])]),
      );
      for (const file of [short, long]) {
        const source = await openInput(file);
        expect(source.dialect.encoding).toBe('utf-8');
        expect(source.warnings).toEqual([
          `${file} starts with a UTF-8 byte order mark but is not valid UTF-8 throughout: its broken bytes are read as "\uFFFD" (and sent so); if the file is Windows-1252, run again with --encoding windows-1252`,
        ]);
        await source.close();
      }
      const forced = await openInput(short, { encoding: 'windows-1252' });
      expect(forced.warnings).toEqual([]);
      expect(forced.header).toEqual(['Email', 'Name']);
      expect(forced.dialect.bom).toBe(true);
      expect((await allRows(forced)).map((r) => r.cells)).toEqual([['a@acme.com', 'René Dupont']]);
      await forced.close();
      // A BOM over valid UTF-8 says nothing.
      const fine = join(dir, 'fine.csv');
      await writeFile(fine, Buffer.concat([bom, body]));
      const ok = await openInput(fine);
      expect(ok.warnings).toEqual([]);
      await ok.close();
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
  it('skips a title block that Excel padded with delimiters to the width of the table', () => {
    const title = 'Leads export - Q3,,,,\r\nGenerated by CRM,,,,\r\n,,,,\r\n';
    const table = 'First Name,Last Name,Email,Company,Notes\r\nJo,Doe,jo@acme.com,Acme,\r\n';
    expect(sniffDialect(title + table).headerLine).toBe(4);
    // A note may fill two cells; a header-only export has nothing below its header.
    expect(sniffDialect('Report:,Leads Q3,,,\na,b,c,d,e\n1,2,3,4,5\n').headerLine).toBe(2);
    expect(sniffDialect('Leads export,,,\nEmail,First,Last,Company\n').headerLine).toBe(2);
    // An empty first row above the table.
    expect(sniffDialect(',,,\nEmail,First,Last,Company\nj@acme.com,Jo,Doe,Acme\n').headerLine).toBe(
      2,
    );
  });
  it('keeps real headers that have some empty names', () => {
    // pandas' index column; unnamed columns in the middle.
    expect(sniffDialect(',email\n0,a@x.example\n1,b@x.example\n').headerLine).toBe(1);
    expect(sniffDialect(',email,name\n0,a@x.example,A\n').headerLine).toBe(1);
    expect(sniffDialect('Email,,,,Name\na@x.example,1,2,3,A\n').headerLine).toBe(1);
    // Unnamed last columns that hold data.
    expect(sniffDialect('a,b,c,d,,\n1,2,3,4,5,6\n7,8,9,10,11,12\n').headerLine).toBe(1);
    // No names at all: the row below is data (it holds an email), however many rows follow.
    expect(sniffDialect(',,,\r\njane@acme.com,Jane,Doe,Acme\r\n').headerLine).toBe(1);
    expect(sniffDialect(',,,\nj@acme.com,Jo,Doe,Acme\nw@acme.com,Wei,Chen,Acme\n').headerLine).toBe(
      1,
    );
    expect(
      sniffDialect('Email,,,\nj@acme.com,Jo,Doe,Acme\nw@acme.com,Wei,Chen,Acme\n').headerLine,
    ).toBe(1);
    // Excel's used range pads header and rows alike; a stray cell below must not become the header.
    expect(sniffDialect('Email,Name,Company,,\na,b,c,,\nd,e,f,,x\ng,h,i,,\n').headerLine).toBe(1);
    expect(
      sniffDialect('Email,,,\na@x.example,,,\nb@x.example,,,1\nc@x.example,,,\n').headerLine,
    ).toBe(1);
  });
  it('never takes a data row for the header when the header names fewer columns than its rows fill', () => {
    // An export whose last column has no name: the rows are one cell wider than the header.
    const notes =
      'Email,Company\na@acme.com,Acme,note1\nb@acme.com,Globex,note2\nc@acme.com,Initech,x\n';
    expect(sniffDialect(notes).headerLine).toBe(1);
    // Most rows carry the extra cell, some not.
    const some = Array.from({ length: 50 }, (_, i) =>
      i % 5 < 3 ? `p${i}@acme.com,Acme ${i},note` : `p${i}@acme.com,Acme ${i}`,
    );
    expect(sniffDialect(['Email,Company', ...some].join('\n')).headerLine).toBe(1);
    // With no email or URL in the rows: a header half as wide as its rows or more is no note.
    expect(
      sniffDialect('Name,Company\nJo,Acme,note\nWei,Globex,note\nAl,Initech,x\n').headerLine,
    ).toBe(1);
    expect(
      sniffDialect('Website,Name\nhttps://acme.com,Acme,x\nhttps://globex.com,Globex,y\n')
        .headerLine,
    ).toBe(1);
    // A title still is one: it fills at most half of the header below it.
    expect(
      sniffDialect('Leads Q3\nName,Company,Title\nJo,Acme,CEO\nWei,Globex,CTO\n').headerLine,
    ).toBe(2);
  });
  it('accepts a quoted "sep=" line', () => {
    expect(sniffDialect('"sep=|"\na|b\n1|2\n')).toEqual({
      delimiter: '|',
      headerLine: 2,
      sepLine: true,
    });
  });
});
