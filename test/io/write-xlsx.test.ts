import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { createOutputWriter, type OutputRow } from '../../src/io/write.js';
import { openInput } from '../../src/io/read.js';
import { xlsxShownText, xlsxStoredText } from '../../src/io/xlsx-cells.js';

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

describe('XLSX text as Excel stores it', () => {
  it('a carriage return, a control character and a text that looks like an escape read back as written, through our reader and in the XML Excel reads (regression: CR became LF, control characters were dropped)', async () => {
    const target = join(dir, 'text.xlsx');
    const note = 'line one\r\nline two\u0001 and _x0041_ literally';
    await write(
      target,
      [row({ index: 0, line: 2, cells: ['1', note, ''] }, ['tab\there\r', null])],
      'xlsx',
    );
    // As Excel reads it: the sheet's XML holds OOXML's escapes, never a raw CR or control.
    const { default: JSZip } = await import('jszip');
    const zip = await JSZip.loadAsync(await readFile(target));
    const xml = await zip.file('xl/worksheets/sheet1.xml')!.async('string');
    expect(xml).toContain('line one_x000D_\nline two_x0001_ and _x005F_x0041_ literally');
    expect(xml).toContain('tab\there_x000D_');
    // As our reader reads it back (a resume, a second run on the output).
    const source = await openInput(target);
    try {
      const rows = [];
      for await (const r of source.rows()) rows.push(r);
      expect(rows[0]!.cells[1]).toBe(note);
      expect(rows[0]!.cells[7]).toBe('tab\there\r');
    } finally {
      await source.close();
    }
  });

  it('an escape in a workbook Excel wrote reads as the character (regression: "_x000D_" read as text)', () => {
    expect(xlsxShownText('a_x000D_\nb')).toBe('a\r\nb');
    expect(xlsxShownText('_x005F_x0041_ and _x0041_')).toBe('_x0041_ and A');
    expect(xlsxShownText('plain')).toBe('plain');
    expect(xlsxStoredText('plain _x')).toBe('plain _x');
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
