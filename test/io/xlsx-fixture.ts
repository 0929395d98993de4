import ExcelJS from 'exceljs';

/** One contact of the test workbook. */
export interface SheetContact {
  id: number;
  first: string;
  last: string;
  company: string;
  phone: number;
  signedUp: Date;
}

/** The i-th contact: a 9-digit numeric id, an 11-digit phone stored as a number, a date. */
export function contactAt(i: number): SheetContact {
  return {
    id: 100_000_000 + i,
    first: `First${i}`,
    last: `Last${i}`,
    company: `Company ${i % 500}`,
    phone: 12_025_550_000 + i,
    signedUp: new Date(Date.UTC(2024, 0, 1 + (i % 365))),
  };
}

export const SHEET_HEADER = ['Id', 'First Name', 'Last Name', 'Company', 'Phone', 'Signed up'];

/**
 * Writes a workbook the way a user's spreadsheet would hold it, with exceljs's own
 * (non-streaming, whole-workbook) writer, never ours: a "Notes" sheet first or not, a merged
 * title row above the header, numeric ids and phones, dates with a date format.
 */
export async function writeContactsWorkbook(
  path: string,
  rows: number,
  o: { notesFirst?: boolean; sheetName?: string } = {},
): Promise<void> {
  const wb = new ExcelJS.Workbook();
  if (o.notesFirst) wb.addWorksheet('Notes').addRow(['nothing to see here']);
  const ws = wb.addWorksheet(o.sheetName ?? 'Leads');
  ws.addRow(['Q3 leads export (do not edit)']);
  ws.mergeCells('A1:F1');
  ws.addRow(SHEET_HEADER);
  for (let i = 0; i < rows; i++) {
    const c = contactAt(i);
    const row = ws.addRow([c.id, c.first, c.last, c.company, c.phone, c.signedUp]);
    row.getCell(6).numFmt = 'yyyy-mm-dd';
  }
  await wb.xlsx.writeFile(path);
}
