import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EnrichError } from '../../src/errors.js';
import { openInput } from '../../src/io/read.js';
import { detectMapping } from '../../src/pipeline/mapping/map-columns.js';
import { allRows, fixture, readFixture } from './read-helpers.js';

const JANE = ['jane@acme.com', 'Jane', 'Doe', 'Acme'];
const WEI = ['wei@umbrella.co', 'Wei', 'Chen', 'Umbrella'];

describe('openInput: delimiters, line ends, BOM', () => {
  it.each([
    ['comma.csv', ','],
    ['tab.tsv', '\t'],
    ['pipe.csv', '|'],
    ['crlf.csv', ','],
    ['cr-only.csv', ','],
    ['bom.csv', ','],
  ])('%s: detects %j and reads every row with its line', async (name, delimiter) => {
    const { source, header, rows } = await readFixture(name);
    expect(source.dialect.delimiter).toBe(delimiter);
    expect(header).toEqual(['email', 'first_name', 'last_name', 'company']);
    expect(rows.map((r) => r.cells)).toEqual([JANE, WEI]);
    expect(rows.map((r) => [r.index, r.line])).toEqual([
      [0, 2],
      [1, 3],
    ]);
    expect(source.dialect.bom).toBe(name === 'bom.csv');
  });

  it('semicolons win over decimal commas', async () => {
    const { source, rows } = await readFixture('semicolon.csv');
    expect(source.dialect.delimiter).toBe(';');
    expect(rows[0]!.cells).toEqual(['jane@acme.com', 'Jane', 'Doe', 'Acme GmbH', '1,5']);
  });

  it('--delimiter overrides detection', async () => {
    const { header, rows } = await readFixture('comma.csv', { delimiter: '|' });
    expect(header).toEqual(['email,first_name,last_name,company']);
    expect(rows[0]!.cells).toEqual(['jane@acme.com,Jane,Doe,Acme']);
  });

  it('keeps separators, doubled quotes and CRLF newlines inside quoted fields, with true line numbers', async () => {
    const { rows } = await readFixture('quoted.csv');
    expect(rows[0]!.cells).toEqual(['jane@acme.com', 'Acme, Inc.', 'said "hi"\r\nthen left']);
    expect(rows[1]!.cells).toEqual(['wei@umbrella.co', 'Umbrella; Ltd', 'a|b\tc']);
    expect(rows.map((r) => r.line)).toEqual([2, 4]);
  });

  it('reads mixed CRLF, LF and CR line ends in one file', async () => {
    const { rows } = await readFixture('mixed-eol.csv');
    expect(rows.map((r) => r.cells[0])).toEqual([
      'jane@acme.com',
      'wei@umbrella.co',
      'mia@tyrell.example',
    ]);
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4]);
  });

  it("uses Excel's sep= line and skips it", async () => {
    const { source, header, rows } = await readFixture('sep-line.csv');
    expect(source.dialect).toMatchObject({ delimiter: ';', sepLine: true, headerLine: 2 });
    expect(header).toEqual(['email', 'first_name', 'last_name', 'company']);
    expect(rows[0]!.cells[3]).toBe('Acme, Inc.');
    expect(rows[0]!.line).toBe(3);
  });

  it('skips blank lines but counts them in line numbers', async () => {
    const { rows } = await readFixture('blank-lines.csv');
    expect(rows.map((r) => [r.cells[0], r.line])).toEqual([
      ['jane@acme.com', 3],
      ['wei@umbrella.co', 6],
    ]);
  });
});

describe('openInput: real-world shapes', () => {
  it('reports ragged rows as row errors, not fatal, keeping every cell', async () => {
    const { rows } = await readFixture('ragged.csv');
    expect(rows.map((r) => r.error)).toEqual([
      undefined,
      'expected 3 cells, got 2',
      'expected 3 cells, got 4 (extra: "extra")',
      undefined,
    ]);
    expect(rows[2]!.cells).toEqual(['mia@tyrell.example', 'Mia', 'Taylor', 'extra']);
    expect(rows[3]!.line).toBe(5);
  });

  it('a header ending in unnamed columns (`Email,Company,,`) over rows without them: the rows are whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-read-unnamed-'));
    try {
      const file = join(dir, 'in.csv');
      writeFileSync(
        file,
        'Email,Company,,\r\nann@acme.com,Acme\r\nbo@globex.com,Globex,\r\ncy@initech.io,Initech,x,y\r\ndi@hooli.com\r\nel@umbrella.co,Umbrella,z,w,v\r\n',
      );
      const source = await openInput(file);
      const rows = await allRows(source);
      await source.close();
      expect(source.header).toEqual(['Email', 'Company', '(column 3)', '(column 4)']);
      expect(rows.map((r) => [r.cells, r.error])).toEqual([
        [['ann@acme.com', 'Acme', '', ''], undefined],
        [['bo@globex.com', 'Globex', '', ''], undefined],
        [['cy@initech.io', 'Initech', 'x', 'y'], undefined],
        // A named column left out is still a ragged row: its cells may have moved.
        [['di@hooli.com'], 'expected 4 cells, got 1'],
        [['el@umbrella.co', 'Umbrella', 'z', 'w', 'v'], 'expected 4 cells, got 5 (extra: "v")'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps duplicate header names apart', async () => {
    const { header, rawHeader, rows } = await readFixture('duplicate-headers.csv');
    expect(rawHeader).toEqual(['Email', 'Name', 'Email', 'Name']);
    expect(header).toEqual(['Email', 'Name', 'Email (2)', 'Name (2)']);
    expect(rows[0]!.cells).toHaveLength(4);
  });

  it('a header the file really has keeps its name: a duplicate takes the next free one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-dup-'));
    try {
      const file = join(dir, 'coll.csv');
      writeFileSync(
        file,
        'Email,email,Email (2),Company,,(Column 5)\na@acme.com,b@acme.com,c@acme.com,Acme,x,y\n',
      );
      const source = await openInput(file);
      const header = source.header;
      const rows = await allRows(source);
      await source.close();
      expect(header).toEqual([
        'Email',
        'email (3)',
        'Email (2)',
        'Company',
        '(column 5) (2)',
        '(Column 5)',
      ]);
      // --map / a mapping file naming the real "Email (2)" gets that column, not the second "Email".
      const mapping = detectMapping('contacts', header, [rows[0]!.cells], {
        business_email: 'Email (2)',
      });
      expect(rows[0]!.cells[mapping.fields.business_email!]).toBe('c@acme.com');
      // Left to detection, all three email columns are named as candidates.
      const err = (() => {
        try {
          detectMapping('contacts', header, [rows[0]!.cells]);
        } catch (e) {
          return e as EnrichError;
        }
      })();
      expect(err?.code).toBe('MAPPING_AMBIGUOUS');
      expect(err?.message).toContain('"Email", "email (3)", "Email (2)" all fit');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the header below a preamble of notes', async () => {
    const { source, header, rows } = await readFixture('preamble.csv');
    expect(source.dialect.headerLine).toBe(4);
    expect(header).toEqual(['Email', 'First Name', 'Last Name', 'Company']);
    expect(rows.map((r) => r.line)).toEqual([5, 6]);
  });

  it('--header-row says where the header is when detection cannot', async () => {
    const guessed = await readFixture('preamble-ambiguous.csv');
    expect(guessed.header).toEqual(['a', 'b', 'c', 'd']);
    const told = await readFixture('preamble-ambiguous.csv', { headerRow: 3 });
    expect(told.header).toEqual(['Email', 'First Name', 'Last Name', 'Company']);
    expect(told.rows.map((r) => [r.line, r.cells[0]])).toEqual([[4, 'jane@acme.com']]);
  });
});

describe('openInput: encodings', () => {
  it("reads Excel's Unicode text export (UTF-16LE, BOM, tabs)", async () => {
    const { source, header, rows } = await readFixture('excel-unicode.txt');
    expect(source.dialect).toMatchObject({ encoding: 'utf-16le', bom: true, delimiter: '\t' });
    expect(header).toEqual(['E-mail Address', 'Given Name', 'Surname', 'Organization']);
    expect(rows[0]!.cells).toEqual(['josé@acme.com', 'José', 'Núñez', 'Acme – Études']);
  });

  it('reads UTF-16BE with BOM', async () => {
    const { source, rows } = await readFixture('utf16be.csv');
    expect(source.dialect.encoding).toBe('utf-16be');
    expect(rows[0]!.cells).toEqual(['zoë@acme.com', 'Zoë']);
  });

  it('falls back to Windows-1252 (bytes 0x80-0x9F included) when the bytes are not UTF-8', async () => {
    const { source, rows } = await readFixture('windows-1252.csv');
    expect(source.dialect.encoding).toBe('windows-1252');
    expect(rows[0]!.cells).toEqual(['rene@acme.com', 'René', '“Big” L’Oiseau', 'Café €–Shop']);
  });

  it('--encoding forces a decoder', async () => {
    const { rows } = await readFixture('windows-1252.csv', { encoding: 'latin1' });
    expect(rows[0]!.cells[1]).toBe('René');
    await expect(openInput(fixture('comma.csv'), { encoding: 'klingon' })).rejects.toMatchObject({
      code: 'USAGE',
    });
  });
});

describe('openInput: an --encoding the bytes cannot be in (session 25)', () => {
  // Read so, the whole file decoded as one garbled line, a header over no rows: the run wrote
  // an output without a single input row, exit 0 (a cron job whose export changed format).
  it.each([
    ['comma.csv', 'utf-16le', /comma\.csv cannot be read as utf-16le: it holds no NUL byte/],
    ['comma.csv', 'utf-16', /cannot be read as utf-16: it holds no NUL byte/],
    ['comma.csv', 'utf-32', /cannot be read as utf-32: it holds no NUL byte/],
    ['comma.csv', 'ucs2', /cannot be read as ucs2: it holds no NUL byte/],
    ['excel-unicode.txt', 'utf-16be', /it starts with the byte order mark of utf-16le/],
  ])('%s read as %s is refused before anything is read as rows', async (name, encoding, why) => {
    await expect(openInput(fixture(name), { encoding })).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
      exitCode: 2,
      message: expect.stringMatching(why),
    });
  });

  it('the byte order of UTF-16 without a BOM decides too; an encoding that fits reads as before', async () => {
    const noBom = join(import.meta.dirname, '../../fixtures/hostile/utf16le-no-bom.csv');
    await expect(openInput(noBom, { encoding: 'utf-16be' })).rejects.toMatchObject({
      message: expect.stringMatching(/its bytes are in the order of utf-16le/),
    });
    const { header } = await readFixture('excel-unicode.txt', { encoding: 'utf-16le' });
    expect(header.length).toBeGreaterThan(1);
    const be = await readFixture('utf16be.csv', { encoding: 'utf-16be' });
    expect(be.rows.length).toBeGreaterThan(0);
  });
});

describe('openInput: JSON, JSON Lines, stdin', () => {
  it('reads an array of objects: union of keys, values as cells, original object kept', async () => {
    const { source, header, rows } = await readFixture('contacts.json');
    expect(source.format).toBe('json');
    expect(header).toEqual([
      'Email',
      'First Name',
      'Last Name',
      'score',
      'vip',
      'tags',
      'extra',
      'owner',
    ]);
    expect(rows[0]!.cells).toEqual([
      'jane@acme.com',
      'Jane',
      'Doe',
      '7',
      'true',
      '["a","b"]',
      '',
      '',
    ]);
    expect(rows[1]!.cells).toEqual(['wei@umbrella.co', 'Wei', 'Chen', '', '', '', '', '{"id":1}']);
    expect(rows[1]!.value).toEqual({
      Email: 'wei@umbrella.co',
      'First Name': 'Wei',
      'Last Name': 'Chen',
      extra: null,
      owner: { id: 1 },
    });
    expect(rows.map((r) => r.line)).toEqual([2, 3]);
  });

  it('reads JSON Lines, skipping blank lines', async () => {
    const { source, header, rows } = await readFixture('contacts.jsonl');
    expect(source.format).toBe('jsonl');
    expect(header).toEqual(['email', 'first_name', 'company']);
    expect(rows.map((r) => [r.line, r.cells])).toEqual([
      [1, ['jane@acme.com', 'Jane', '']],
      [3, ['wei@umbrella.co', 'Wei', 'Umbrella']],
    ]);
  });

  it('spools stdin ("-") to a temp file that can be read twice and is removed on close', async () => {
    const stdin = Readable.from([Buffer.from('email;first_name\r\njane@acme.com;Jane\r\n')]);
    const source = await openInput('-', { stdin });
    expect(source.name).toBe('-');
    expect((await allRows(source)).map((r) => r.cells)).toEqual([['jane@acme.com', 'Jane']]);
    expect((await allRows(source)).length).toBe(1);
    const id = await source.identity();
    expect(id.size).toBe(Buffer.byteLength('email;first_name\r\njane@acme.com;Jane\r\n'));
    expect(id.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(id.path).toBe('-');
    await source.close();
    const { existsSync } = await import('node:fs');
    expect(existsSync(source.filePath)).toBe(false);
  });

  it('refuses "-" when nothing is piped in (a terminal)', async () => {
    const tty = Object.assign(Readable.from([]), { isTTY: true });
    await expect(openInput('-', { stdin: tty })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/nothing is piped in/),
    });
  });

  it('sniffs JSON and JSON Lines on stdin', async () => {
    const json = await openInput('-', { stdin: Readable.from(['[{"a":1}]']) });
    const jsonl = await openInput('-', { stdin: Readable.from(['{"a":1}\n{"a":2}\n']) });
    expect([json.format, jsonl.format]).toEqual(['json', 'jsonl']);
    expect((await allRows(jsonl)).map((r) => r.cells)).toEqual([['1'], ['2']]);
    await json.close();
    await jsonl.close();
  });
});

describe('openInput: JSON objects and arrays in cells', () => {
  it('marks the cells that hold one (their JSON text is no name or address), and no other row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-read-nested-'));
    try {
      const file = join(dir, 'in.jsonl');
      writeFileSync(
        file,
        [
          '{"name":"Jane","company":{"name":"Acme"},"tags":["a"]}',
          '{"name":"Al","company":"Globex","n":12345678901234567890}',
          '{"name":null,"company":[],"tags":null}',
        ].join('\n'),
      );
      const source = await openInput(file);
      const rows = await allRows(source);
      await source.close();
      expect(source.header).toEqual(['name', 'company', 'tags', 'n']);
      expect(rows.map((r) => [r.cells, r.nested])).toEqual([
        [
          ['Jane', '{"name":"Acme"}', '["a"]', ''],
          [false, true, true, false],
        ],
        [['Al', 'Globex', '', '12345678901234567890'], undefined],
        [
          ['', '[]', '', ''],
          [false, true, false, false],
        ],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('openInput: unreadable input is a clear error (exit 2)', () => {
  const failure = async (name: string) => {
    try {
      await readFixture(name);
    } catch (err) {
      expect(err).toBeInstanceOf(EnrichError);
      return err as EnrichError;
    }
    throw new Error(`${name} was read without error`);
  };

  it.each([
    ['missing.csv', 'INPUT_UNREADABLE', /no such file/, undefined],
    ['workbook.xlsx', 'INPUT_UNREADABLE', /not an Excel workbook.*ZIP/, undefined],
    ['not-array.json', 'INPUT_INVALID', /expected a JSON array of objects/, 1],
    ['array-of-numbers.json', 'INPUT_INVALID', /expected an object .* element 2/, 3],
    ['bad-line.jsonl', 'INPUT_INVALID', /line 2 is not valid JSON/, 2],
    ['unclosed-quote.csv', 'INPUT_INVALID', /quoted field is never closed/, 3],
    ['empty.csv', 'INPUT_INVALID', /no header row/, 1],
  ])('%s: %s', async (name, code, message, line) => {
    const err = await failure(name);
    expect(err.code).toBe(code);
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(message);
    expect(err.location?.file).toContain(name);
    expect(err.location?.line).toBe(line);
  });

  it('a directory named as the input is refused as one, not an internal error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-read-dir-'));
    try {
      const err = await openInput(dir).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EnrichError);
      expect((err as EnrichError).code).toBe('INPUT_UNREADABLE');
      expect((err as EnrichError).message).toBe(`cannot read ${dir}: it is a directory`);
      expect((err as EnrichError).location?.file).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a header-only file has no rows', async () => {
    const { header, rows } = await readFixture('header-only.csv');
    expect(header).toEqual(['email', 'first_name']);
    expect(rows).toEqual([]);
  });
});

describe('openInput: JSON keys named like Object.prototype members', () => {
  it('a record without such a key has an empty cell there, never the built-in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-read-proto-'));
    try {
      const file = join(dir, 'in.jsonl');
      writeFileSync(
        file,
        [
          '{"email":"a@acme.com","constructor":"Acme","__proto__":"p","toString":"t"}',
          '{"email":"b@acme.com"}',
        ].join('\n'),
      );
      const source = await openInput(file);
      const rows = await allRows(source);
      await source.close();
      expect(source.header).toEqual(['email', 'constructor', '__proto__', 'toString']);
      expect(rows.map((r) => [r.cells, r.nested])).toEqual([
        [['a@acme.com', 'Acme', 'p', 't'], undefined],
        [['b@acme.com', '', '', ''], undefined],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
