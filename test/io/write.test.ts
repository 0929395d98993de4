import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { escapeFormula } from '../../src/io/formula-escape.js';
import type { InputRow } from '../../src/io/read.js';
import {
  createOutputWriter,
  STATUS_COLUMNS,
  type OutputRow,
  type OutputWriterOptions,
} from '../../src/io/write.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const input = (cells: string[], index = 0): InputRow => ({ index, line: index + 2, cells });
const row = (over: Partial<OutputRow> & { input: InputRow }): OutputRow => ({
  row: over.input.index + 1,
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
  ...over,
});

async function writeAll(options: Partial<OutputWriterOptions>, rows: OutputRow[]): Promise<string> {
  const target = join(dir, `out.${options.format ?? 'csv'}`);
  const w = await createOutputWriter({
    target,
    format: 'csv',
    inputHeader: ['Email', 'Name'],
    jsonKeys: ['Email', 'Name'],
    extraColumns: ['enriched_phone', 'enriched_flag'],
    ...options,
  });
  for (const r of rows) await w.write(r);
  await w.close();
  return readFile(target, 'utf8');
}

describe('escapeFormula', () => {
  it.each([
    ['=SUM(A1:A2)', 'auto', "'=SUM(A1:A2)"],
    ['+cmd|calc', 'auto', "'+cmd|calc"],
    ['-2+3', 'auto', "'-2+3"],
    ['@SUM(1)', 'auto', "'@SUM(1)"],
    ['\tx', 'auto', "'\tx"],
    ['\rx', 'auto', "'\rx"],
    // A tab or CR before digits is no phone number: a spreadsheet would still see a trigger.
    ['\t1234567', 'auto', "'\t1234567"],
    ['\r-123-4567', 'auto', "'\r-123-4567"],
    ['+1 415\t555 0100', 'auto', "'+1 415\t555 0100"],
    ['+1 (415) 555-0100', 'auto', '+1 (415) 555-0100'],
    ['-12.5', 'auto', '-12.5'],
    ['+3e4', 'auto', '+3e4'],
    ['Acme', 'auto', 'Acme'],
    ['-12.5', 'always', "'-12.5"],
    ['+1 (415) 555-0100', 'always', "'+1 (415) 555-0100"],
    ['=1', 'never', '=1'],
  ] as const)('%j (%s) -> %j', (value, mode, expected) => {
    expect(escapeFormula(value, mode)).toBe(expected);
  });
});

describe('createOutputWriter: CSV/TSV', () => {
  it('writes input cells exactly as read, then status and escaped service values; booleans as true/false', async () => {
    const text = await writeAll({}, [
      row({ input: input(['=1+1', ' Jane , "Doe" ']), values: ['=HYPERLINK("x")', true] }),
      row({
        input: input(['a@b.co', ''], 1),
        status: 'invalid',
        error: 'needs at least one of: x',
        creditCharged: null,
        values: [null, false],
      }),
    ]);
    expect(text).toBe(
      [
        `Email,Name,${STATUS_COLUMNS.join(',')},enriched_phone,enriched_flag`,
        `=1+1," Jane , ""Doe"" ",enriched,,true,,"'=HYPERLINK(""x"")",true`,
        'a@b.co,,invalid,needs at least one of: x,,,,false',
        '',
      ].join('\n'),
    );
  });

  it('accepts extraColumns that already start with the status columns', async () => {
    const text = await writeAll({ extraColumns: [...STATUS_COLUMNS, 'enriched_phone'] }, [
      row({ input: input(['a', 'b']), values: ['+1 415 555 0100'] }),
    ]);
    expect(text.split('\n')[0]).toBe(
      'Email,Name,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enriched_phone',
    );
    expect(text.split('\n')[1]).toBe('a,b,enriched,,true,,+1 415 555 0100');
  });

  it('aligns a ragged row to the header', async () => {
    const text = await writeAll({}, [
      row({ input: input(['only']), status: 'invalid', error: 'expected 2 cells, got 1' }),
    ]);
    expect(text.split('\n')[1]).toBe('only,,invalid,"expected 2 cells, got 1",true,,,');
  });

  it('TSV with a BOM; formula escaping can be turned off', async () => {
    const text = await writeAll({ format: 'tsv', bom: true, formulaEscape: 'never' }, [
      row({ input: input(['a\tb', 'c']), values: ['=1', null] }),
    ]);
    expect(text.startsWith('\uFEFFEmail\tName\tenrich_status')).toBe(true);
    expect(text.split('\n')[1]).toBe('"a\tb"\tc\tenriched\t\ttrue\t\t=1\t');
  });

  it('an Excel sep= first line when asked (the input had one), after the BOM, naming the delimiter (regression: not written)', async () => {
    const rows = () => [row({ input: input(['a', 'b']) })];
    const semi = await writeAll({ delimiter: ';', sepLine: true }, rows());
    expect(semi.split('\n').slice(0, 2)).toEqual([
      'sep=;',
      'Email;Name;enrich_status;enrich_error;enrich_credit_charged;enrich_cached_at;enriched_phone;enriched_flag',
    ]);
    const withBom = await writeAll({ bom: true, sepLine: true }, rows());
    expect(withBom.startsWith('\uFEFFsep=,\nEmail,Name,')).toBe(true);
    expect(withBom.indexOf('\uFEFF', 1)).toBe(-1);
    expect((await writeAll({}, rows())).startsWith('Email,')).toBe(true);
  });

  it('an empty output still has its header', async () => {
    expect(await writeAll({}, [])).toBe(
      'Email,Name,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enriched_phone,enriched_flag\n',
    );
  });
});

describe('createOutputWriter: JSON/JSONL', () => {
  const rows = () => [
    row({
      input: input(['jane@acme.com', 'Jane']),
      record: { email: 'jane@acme.com', phone: '=1' },
    }),
    row({
      input: { ...input(['x', ''], 1), value: { Email: 'x', n: 1 } },
      status: 'invalid',
      error: 'bad',
      creditCharged: null,
    }),
  ];

  it('JSON: an array of {row, input, status, error, credit_charged, record}; JSON input objects kept as read', async () => {
    const parsed = JSON.parse(await writeAll({ format: 'json' }, rows()));
    expect(parsed).toEqual([
      {
        row: 1,
        input: { Email: 'jane@acme.com', Name: 'Jane' },
        status: 'enriched',
        error: null,
        credit_charged: true,
        cached_at: null,
        record: { email: 'jane@acme.com', phone: '=1' },
      },
      {
        row: 2,
        input: { Email: 'x', n: 1 },
        status: 'invalid',
        error: 'bad',
        credit_charged: null,
        cached_at: null,
        record: null,
      },
    ]);
  });

  it('JSONL with `records` for companies', async () => {
    const text = await writeAll({ format: 'jsonl', recordKey: 'records' }, rows());
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => Object.keys(l))).toEqual([
      ['row', 'input', 'status', 'error', 'credit_charged', 'cached_at', 'records'],
      ['row', 'input', 'status', 'error', 'credit_charged', 'cached_at', 'records'],
    ]);
    expect(lines[1].records).toEqual([]);
  });

  it('an empty JSON output is []', async () => {
    expect(JSON.parse(await writeAll({ format: 'json' }, []))).toEqual([]);
  });
});

describe('createOutputWriter: atomic files and stdout', () => {
  it('writes to a temp file in the target directory and renames it on close', async () => {
    const target = join(dir, 'out.csv');
    const w = await createOutputWriter({
      target,
      format: 'csv',
      inputHeader: ['a'],
      jsonKeys: ['a'],
      extraColumns: [],
    });
    await w.write(row({ input: input(['1']) }));
    const during = await readdir(dir);
    expect(during).toHaveLength(1);
    expect(during[0]).toMatch(/^\.out\.csv\.[0-9a-f]+\.tmp$/);
    await w.close();
    expect(await readdir(dir)).toEqual(['out.csv']);
  });

  it('abort leaves no file behind', async () => {
    const w = await createOutputWriter({
      target: join(dir, 'out.csv'),
      format: 'csv',
      inputHeader: ['a'],
      jsonKeys: ['a'],
      extraColumns: [],
    });
    await w.write(row({ input: input(['1']) }));
    await w.abort();
    expect(await readdir(dir)).toEqual([]);
  });

  it('"-" writes to stdout (injected here), nothing on disk', async () => {
    const stdout = new PassThrough();
    const chunks: string[] = [];
    stdout.on('data', (c: Buffer) => chunks.push(c.toString()));
    const w = await createOutputWriter({
      target: '-',
      format: 'jsonl',
      inputHeader: ['a'],
      jsonKeys: ['a'],
      extraColumns: [],
      stdout,
    });
    await w.write(row({ input: input(['1']) }));
    await w.close();
    expect(JSON.parse(chunks.join(''))).toMatchObject({ row: 1, input: { a: '1' } });
  });

  it('an unwritable target is a clear error', async () => {
    await expect(
      createOutputWriter({
        target: join(dir, 'missing', 'out.csv'),
        format: 'csv',
        inputHeader: [],
        jsonKeys: [],
        extraColumns: [],
      }),
    ).rejects.toThrow(/cannot write/);
  });
});
