import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { cellText, numberText } from '../../src/io/xlsx-cells.js';
import { SHEET_HEADER, writeContactsWorkbook } from './xlsx-fixture.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-xlsx-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function rowsOf(path: string, o = {}) {
  const source = await openInput(path, o);
  try {
    const rows = [];
    for await (const r of source.rows()) rows.push(r);
    return { source, rows };
  } finally {
    await source.close();
  }
}

describe('XLSX input', () => {
  it('skips the merged title row, reads ids and phones whole and dates as ISO', async () => {
    const path = join(dir, 'leads.xlsx');
    await writeContactsWorkbook(path, 3);
    const { source, rows } = await rowsOf(path);
    expect(source.format).toBe('xlsx');
    expect(source.rawHeader).toEqual(SHEET_HEADER);
    expect(source.dialect.headerLine).toBe(2);
    expect(source.warnings.join()).toMatch(/row 2 is taken as the header/);
    expect(rows[0]).toMatchObject({
      index: 0,
      line: 3,
      cells: ['100000000', 'First0', 'Last0', 'Company 0', '12025550000', '2024-01-01'],
    });
    expect(rows[0]!.values![0]).toBe(100000000);
    expect(rows[0]!.values![5]).toBeInstanceOf(Date);
    expect(rows).toHaveLength(3);
  });

  it('is known by its content, whatever its name, and reads again on every pass', async () => {
    const path = join(dir, 'export.dat');
    await writeContactsWorkbook(path, 2);
    const source = await openInput(path);
    try {
      expect(source.format).toBe('xlsx');
      for (let pass = 0; pass < 2; pass++) {
        const seen = [];
        for await (const r of source.rows()) seen.push(r.cells[1]);
        expect(seen).toEqual(['First0', 'First1']);
      }
      const id = await source.identity();
      expect(id.size).toBeGreaterThan(0);
      expect(id.sha256).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await source.close();
    }
  });

  it('--sheet picks a sheet by name or number; a missing one lists the sheets', async () => {
    const path = join(dir, 'two.xlsx');
    await writeContactsWorkbook(path, 1, { notesFirst: true });
    expect((await rowsOf(path)).source.rawHeader).toEqual(['nothing to see here']);
    expect((await rowsOf(path, { sheet: 'leads' })).rows[0]!.cells[1]).toBe('First0');
    expect((await rowsOf(path, { sheet: '2' })).rows[0]!.cells[1]).toBe('First0');
    await expect(openInput(path, { sheet: 'Contacts' })).rejects.toThrow(
      /has no sheet "Contacts": expected one of "Notes", "Leads"/,
    );
  });

  it('refuses a file named .xlsx that is no workbook', async () => {
    const path = join(dir, 'fake.xlsx');
    await writeFile(path, 'email\njane@acme.com\n');
    await expect(openInput(path)).rejects.toThrow(/is not an Excel workbook/);
  });
});

describe('cells as a user sees them', () => {
  it.each([
    [12025550123, undefined, '12025550123'],
    [0.1 + 0.2, undefined, '0.3'],
    [1e21, undefined, '1000000000000000000000'],
    [0.25, '0%', '25%'],
    [0.1234, '0.00%', '12.34%'],
  ])('%s (%s) shows as %s', (n, fmt, text) => {
    expect(numberText(n, fmt)).toBe(text);
  });

  it('formulas show their result, rich text its text, dates with a time their time', () => {
    expect(cellText({ formula: 'A1*2', result: 4 })).toBe('4');
    expect(cellText({ richText: [{ text: 'Ac' }, { text: 'me' }] })).toBe('Acme');
    expect(cellText({ text: 'site', hyperlink: 'https://a.example' })).toBe('site');
    expect(cellText(new Date(Date.UTC(2024, 2, 1, 9, 30)))).toBe('2024-03-01T09:30:00');
    expect(cellText(true)).toBe('TRUE');
    expect(cellText({ error: '#N/A' })).toBe('#N/A');
  });
});
