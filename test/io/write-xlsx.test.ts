import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { createOutputWriter, type OutputRow } from '../../src/io/write.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-xlsx-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const row = (input: InputRow, values: OutputRow['values']): OutputRow => ({
  row: input.index + 1,
  input,
  status: 'enriched',
  error: '',
  creditCharged: true,
  values,
});

async function write(target: string, rows: OutputRow[], format: 'xlsx' | 'csv' | 'jsonl') {
  const w = await createOutputWriter({
    target,
    format,
    inputHeader: ['Id', 'Name', 'Signed up'],
    jsonKeys: ['Id', 'Name', 'Signed up'],
    extraColumns: ['enriched_phone', 'enriched_employees'],
  });
  for (const r of rows) await w.write(r);
  await w.close();
}

describe('XLSX output', () => {
  it('keeps typed input cells, writes the enrichment as text cells, never a formula', async () => {
    const target = join(dir, 'out.xlsx');
    const when = new Date(Date.UTC(2024, 0, 31));
    await write(
      target,
      [
        row({ index: 0, line: 2, cells: ['7', 'Ann', '2024-01-31'], values: [7, 'Ann', when] }, [
          '=HYPERLINK("http://evil.example")',
          250,
        ]),
        row({ index: 1, line: 3, cells: ['007', '+1 555', ''] }, [null, null]),
      ],
      'xlsx',
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(target);
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(1).values).toEqual([
      undefined,
      'Id',
      'Name',
      'Signed up',
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'enriched_phone',
      'enriched_employees',
    ]);
    const first = ws.getRow(2);
    expect(first.getCell(1).value).toBe(7);
    expect(first.getCell(3).value).toEqual(when);
    expect(first.getCell(4).value).toBe('enriched');
    expect(first.getCell(6).value).toBe('true');
    // Text, not a formula: the cell holds the string; nothing runs it.
    expect(first.getCell(7).value).toBeNull(); // enrich_cached_at: answered by this run
    expect(first.getCell(8).value).toBe('=HYPERLINK("http://evil.example")');
    expect(first.getCell(8).type).toBe(ExcelJS.ValueType.String);
    expect(first.getCell(9).value).toBe('250');
    // A text input keeps its leading zeros and plus sign as text.
    expect(ws.getRow(3).getCell(1).value).toBe('007');
    expect(ws.getRow(3).getCell(2).value).toBe('+1 555');
    expect(await readdir(dir)).toEqual(['out.xlsx']); // the temp file was renamed into place
  });
});

describe('gzip output', () => {
  it.each([
    ['out.csv.gz', 'csv' as const, /^Id,Name,Signed up,enrich_status/],
    ['out.jsonl.gz', 'jsonl' as const, /^\{"row":1,"input":\{"Id":"7"/],
  ])('%s is gzip-compressed by its name', async (name, format, start) => {
    const target = join(dir, name);
    await write(target, [row({ index: 0, line: 2, cells: ['7', 'Ann', ''] }, [null, 1])], format);
    const text = gunzipSync(await readFile(target)).toString('utf8');
    expect(text).toMatch(start);
  });
});

describe('XLSX rejects', () => {
  it('are written on a sheet named Rejects (regression: "Enriched")', async () => {
    const { openRejects } = await import('../../src/pipeline/join/rejects.js');
    const target = join(dir, 'rejects.xlsx');
    const source = { rawHeader: ['Email'], header: ['Email'] } as never;
    const r = await openRejects(source, target, 'contacts');
    await r.write(
      { index: 0, line: 2, cells: ['not an address'] } as InputRow,
      {
        error: 'no email',
        column: 'Email',
      } as never,
    );
    await r.close();
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(target);
    expect(book.worksheets.map((w) => w.name)).toEqual(['Rejects']);
    expect(book.worksheets[0]!.getRow(2).getCell(1).value).toBe('not an address');
  });
});
