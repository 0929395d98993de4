import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-xlsx-header-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** A workbook written by exceljs (a real spreadsheet library), each sheet its rows. */
async function workbook(name: string, sheets: Record<string, (string | null)[][]>) {
  const wb = new ExcelJS.Workbook();
  for (const [sheet, rows] of Object.entries(sheets)) {
    const ws = wb.addWorksheet(sheet);
    for (const r of rows) ws.addRow(r);
  }
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

async function rowsOf(path: string, o: { headerRow?: number } = {}) {
  const source = await openInput(path, o);
  try {
    const rows = [];
    for await (const r of source.rows()) rows.push(r.cells);
    return { header: source.header, rows };
  } finally {
    await source.close();
  }
}

/**
 * A sheet without a header row is said as it is, as a CSV's is (io/header.ts): never "an empty
 * sheet" for a sheet that has rows, and never a header taken from another row than the one named.
 */
describe('XLSX input without a header row', () => {
  const leads = {
    Leads: [['Leads export Q3'], [], ['Company', 'Website'], ['Acme', 'acme.com']],
  };

  it('--header-row on a blank row is refused, not the next row read as header and again as data (a paid lookup of "Company")', async () => {
    const path = await workbook('blank-row.xlsx', leads);
    await expect(rowsOf(path, { headerRow: 2 })).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      message: expect.stringMatching(/row 2 of sheet "Leads" names no column \(it is blank\)/),
      hint: expect.stringMatching(/--header-row/),
      location: { line: 2 },
    });
    // The row that is the header: read once, as the header.
    expect(await rowsOf(path, { headerRow: 3 })).toEqual({
      header: ['Company', 'Website'],
      rows: [['Acme', 'acme.com']],
    });
  });

  it('--header-row past the last row says so and where the sheet ends, not "an empty sheet"', async () => {
    const path = await workbook('past-end.xlsx', leads);
    const err = await rowsOf(path, { headerRow: 9 }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INPUT_INVALID',
      message: expect.stringMatching(
        /--header-row 9 is past the end of sheet "Leads" \(its last row is 4\)/,
      ),
    });
    expect((err as Error).message).not.toMatch(/empty sheet/);
  });

  it('an empty first sheet (a cover sheet) is named, and the hint names the sheets --sheet can read', async () => {
    const path = await workbook('cover.xlsx', {
      Cover: [],
      Data: [['Email'], ['a@x.com']],
      More: [['Email'], ['b@x.com']],
    });
    await expect(rowsOf(path)).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      message: expect.stringMatching(/cover\.xlsx has no header row .*: sheet "Cover" is empty/),
      hint: 'The workbook has other sheets: read one with --sheet "Data" or --sheet "More".',
    });
  });
});
