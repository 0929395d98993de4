import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { readXlsxRows, unreadableWorkbook } from '../../src/io/read-xlsx.js';
import type { EnrichError } from '../../src/errors.js';
import { cellText, timeOnly } from '../../src/io/xlsx-cells.js';
import { numberText, zeroPadded } from '../../src/io/xlsx-number-format.js';
import { createOutputWriter } from '../../src/io/write.js';
import {
  formulaResultsAsText,
  namespacePrefixDropped,
  phoneticGuidesDropped,
} from '../../src/io/xlsx-zip.js';
import { uncalculatedWarning } from '../../src/io/xlsx-source.js';
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
  it('a header naming fewer columns than its rows fill stays the header, and a warning says why', async () => {
    const path = join(dir, 'unnamed-last-column.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Company']);
    ws.addRow(['a@acme.com', 'Acme', 'note1']);
    ws.addRow(['b@acme.com', 'Globex', 'note2']);
    await wb.xlsx.writeFile(path);
    const { source, rows } = await rowsOf(path);
    expect(source.rawHeader).toEqual(['Email', 'Company']);
    expect(rows.map((r) => [r.line, r.error])).toEqual([
      [2, 'expected 2 cells, got 3 (extra: "note1")'],
      [3, 'expected 2 cells, got 3 (extra: "note2")'],
    ]);
    expect(source.warnings).toEqual([
      `${path}: the header (row 1) names 2 columns, but most rows below it have 3 cells: those rows are invalid ("expected 2 cells"), their extra cells kept in enrich_error; name every column in the header row and run again`,
    ]);
  });

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

  it('a sheet whose name is the number asked for wins over a position; a missing one is never listed as expected (regression: "2024" refused, "2" took the second tab)', async () => {
    const path = join(dir, 'years.xlsx');
    const wb = new ExcelJS.Workbook();
    for (const name of ['2', '2024', 'Q1 Leads']) wb.addWorksheet(name).addRow([`tab ${name}`]);
    await wb.xlsx.writeFile(path);
    const first = async (sheet: string | number) =>
      (await rowsOf(path, { sheet })).source.rawHeader;
    expect(await first('2024')).toEqual(['tab 2024']);
    expect(await first('2')).toEqual(['tab 2']);
    expect(await first(' 3 ')).toEqual(['tab Q1 Leads']); // no sheet named so: the third
    expect(await first(2)).toEqual(['tab 2024']); // a number (library) is a position
    const refused = async (sheet: string | number) =>
      openInput(path, { sheet }).then(
        () => undefined,
        (e: unknown) => e as EnrichError,
      );
    expect(await refused('2023')).toMatchObject({
      code: 'USAGE',
      message: `${path} has no sheet named "2023", nor a sheet at that position: expected one of "2", "2024", "Q1 Leads", or a number from 1 to 3`,
    });
    expect((await refused(4))?.message).toBe(
      `${path} has no sheet number 4: expected one of "2", "2024", "Q1 Leads", or a number from 1 to 3`,
    );
  });

  it('a chart sheet first (a dashboard export) is passed over by default; --sheet counts it as a tab and, naming it, is told it is a chart (regression: "no header row" exit 2)', async () => {
    const path = join(dir, 'chart-first.xlsx');
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Chart1').addRow(['x']);
    wb.addWorksheet('Leads').addRow(['tab Leads']);
    const zip = await JSZip.loadAsync(await wb.xlsx.writeBuffer());
    // The first tab made a chart sheet, as Excel writes one: its own part and relationship type.
    const rels = 'xl/_rels/workbook.xml.rels';
    const text = await zip.file(rels)!.async('string');
    const chart = text.replace(
      /Type="[^"]*\/worksheet" Target="(\/?xl\/)?worksheets\/sheet1\.xml"/,
      'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chartsheet" Target="chartsheets/sheet1.xml"',
    );
    expect(chart).not.toBe(text);
    zip.file(rels, chart);
    zip.remove('xl/worksheets/sheet1.xml');
    zip.file(
      'xl/chartsheets/sheet1.xml',
      '<?xml version="1.0" encoding="UTF-8"?><chartsheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"/></sheetViews></chartsheet>',
    );
    await writeFile(path, await zip.generateAsync({ type: 'nodebuffer' }));
    const { source } = await rowsOf(path);
    expect([source.rawHeader[0], source.warnings]).toEqual(['tab Leads', []]);
    expect((await rowsOf(path, { sheet: 2 })).source.rawHeader[0]).toBe('tab Leads');
    for (const sheet of [1, 'Chart1'])
      await expect(openInput(path, { sheet })).rejects.toMatchObject({
        code: 'USAGE',
        message: `${path}: sheet "Chart1" is a chart sheet: it holds no cells to read`,
      });
  });

  it('reads the first visible sheet by default, with a warning naming the hidden ones passed over; positions count visible tabs; a hidden sheet is read by name (regression: the hidden first tab was enriched)', async () => {
    const path = join(dir, 'hidden.xlsx');
    const wb = new ExcelJS.Workbook();
    const tabs: [string, 'visible' | 'hidden' | 'veryHidden'][] = [
      ['Lookup', 'hidden'],
      ['Config', 'veryHidden'],
      ['Leads', 'visible'],
      ['Archive', 'hidden'],
      ['Old', 'visible'],
    ];
    for (const [name, state] of tabs) wb.addWorksheet(name, { state }).addRow([`tab ${name}`]);
    await wb.xlsx.writeFile(path);
    const read = async (sheet?: string | number) => {
      const { source } = await rowsOf(path, sheet === undefined ? {} : { sheet });
      return [source.rawHeader[0], source.warnings];
    };
    expect(await read()).toEqual([
      'tab Leads',
      [
        `${path}: reading sheet "Leads", the first visible one; hidden sheet(s) "Lookup", "Config" before it skipped (--sheet "Lookup" reads the first)`,
      ],
    ]);
    expect(await read('1')).toEqual(['tab Leads', []]);
    expect(await read('2')).toEqual(['tab Old', []]);
    expect(await read(2)).toEqual(['tab Old', []]);
    expect(await read('lookup')).toEqual(['tab Lookup', []]);
    expect(await read('Config')).toEqual(['tab Config', []]);
    await expect(openInput(path, { sheet: '3' })).rejects.toMatchObject({
      code: 'USAGE',
      message: `${path} has no sheet named "3", nor a sheet at that position: expected one of "Leads", "Old", or a number from 1 to 2 (hidden, by name only: "Lookup", "Config", "Archive")`,
    });
    // Only hidden sheets (Excel refuses to hide the last one; a program may): nothing to guess.
    const allHidden = join(dir, 'all-hidden.xlsx');
    const hidden = new ExcelJS.Workbook();
    hidden.addWorksheet('Lookup', { state: 'hidden' }).addRow(['old@acme.com']);
    await hidden.xlsx.writeFile(allHidden);
    await expect(openInput(allHidden)).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      message: `${allHidden} has no visible sheet: expected a tab to read, got only hidden ones ("Lookup")`,
    });
    // No hidden sheet first: no warning.
    const plain = join(dir, 'plain-two.xlsx');
    await writeContactsWorkbook(plain, 1, { notesFirst: true });
    expect((await rowsOf(plain)).source.warnings).not.toContainEqual(
      expect.stringContaining('hidden'),
    );
  });

  it('refuses a file named .xlsx that is no workbook', async () => {
    const path = join(dir, 'fake.xlsx');
    await writeFile(path, 'email\njane@acme.com\n');
    await expect(openInput(path)).rejects.toThrow(/is not an Excel workbook/);
  });
});

/** The same workbook with its parts stored in another order, and its sheet targets rewritten. */
async function restored(
  from: string,
  to: string,
  order: (names: string[]) => string[],
  rewrite: (name: string, text: string) => [string, string] = (name, text) => [name, text],
) {
  const source = await JSZip.loadAsync(await readFile(from));
  const zip = new JSZip();
  for (const name of order(Object.keys(source.files).filter((n) => !n.endsWith('/')))) {
    zip.file(...rewrite(name, await source.file(name)!.async('string')));
  }
  await writeFile(to, await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
}

describe('formula results: errors and booleans', () => {
  it('a formula whose result is an error reads as Excel shows it, a plain error cell as its code (regression: the formula read empty)', async () => {
    const path = join(dir, 'errors.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Company', 'Score']);
    ws.addRow(['a@acme.com', { error: '#N/A' }, { formula: '1/0', result: { error: '#DIV/0!' } }]);
    ws.addRow(['b@acme.com', 'Globex', { formula: '2*3', result: 6 }]);
    await wb.xlsx.writeFile(path);
    const { rows } = await rowsOf(path);
    expect(rows.map((r) => r.cells)).toEqual([
      ['a@acme.com', '#N/A', '#DIV/0!'],
      ['b@acme.com', 'Globex', '6'],
    ]);
  });

  it('a formula whose result is a boolean reads TRUE or FALSE, as Excel shows it; a plain boolean stays one (regression: 1 and 0)', async () => {
    const path = join(dir, 'booleans.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Big', 'Known']);
    ws.addRow(['a@acme.com', { formula: 'LEN(A2)>5', result: true }, true]);
    ws.addRow(['b@acme.com', { formula: 'LEN(A3)>50', result: false }, false]);
    ws.addRow([
      'c@acme.com',
      { formula: '1+1', result: 2 },
      { formula: 'A4', result: 'c@acme.com' },
    ]);
    await wb.xlsx.writeFile(path);
    const { rows } = await rowsOf(path);
    expect(rows.map((r) => r.cells)).toEqual([
      ['a@acme.com', 'TRUE', 'TRUE'],
      ['b@acme.com', 'FALSE', 'FALSE'],
      ['c@acme.com', '2', 'c@acme.com'],
    ]);
    // The plain booleans are booleans still (an .xlsx output keeps them so); the formula's is its text.
    expect(rows[0]!.values?.slice(1)).toEqual(['TRUE', true]);
  });

  it('the type is read as text wherever a chunk of the sheet ends, and only on cells', async () => {
    const xml =
      '<row r="2"><c r="A2" t="e"><v>#N/A</v></c><c r="B2" s="1" t="e"><f>1/0</f><v>#DIV/0!</v></c>' +
      '<c r="C2" t="s"><v>0</v></c><c r="D2" t="inlineStr"><is><t>t="e" stays</t></is></c>' +
      '<c r="E2" t="b"/><c r="F2" t="b"><v>1</v></c><c r="G2" s="2" t="b"><f>A2&gt;5</f><v>1</v></c>' +
      '<c r="H2" t="b"><f t="shared" si="0"/><v> 0 </v></c><c r="I2" t="b" s="3">\n  <f>1</f><v>1</v></c><cols/></row>';
    const want =
      '<row r="2"><c r="A2" t="str"><v>#N/A</v></c><c r="B2" s="1" t="str"><f>1/0</f><v>#DIV/0!</v></c>' +
      '<c r="C2" t="s"><v>0</v></c><c r="D2" t="inlineStr"><is><t>t="e" stays</t></is></c>' +
      '<c r="E2" t="b"/><c r="F2" t="b"><v>1</v></c><c r="G2" s="2" t="str"><f>A2&gt;5</f><v>TRUE</v></c>' +
      '<c r="H2" t="str"><f t="shared" si="0"/><v>FALSE</v></c><c r="I2" t="str" s="3">\n  <f>1</f><v>TRUE</v></c><cols/></row>';
    await expectAtEveryCut(formulaResultsAsText, xml, want);
    const all = async (...chunks: string[]) => {
      const parts: string[] = [];
      for await (const part of formulaResultsAsText(
        (async function* () {
          yield* chunks;
        })(),
      ))
        parts.push(part);
      return parts;
    };
    // A sheet cut short inside a tag is passed on as it is; a last cell tag is read too.
    expect((await all('<row><c r="A1" t="e', '')).join('')).toBe('<row><c r="A1" t="e');
    expect((await all('<row><c r="A1" t="e">')).join('')).toBe('<row><c r="A1" t="str">');
    expect(await all('<row>', '</row>')).toEqual(['<row>', '</row>']);
    // A boolean cell left open waits for its end, but not past 64 KB.
    expect(await all('<c r="A1" t="b"><f>x', '</f><v>1</v></c>')).toEqual([
      '',
      '<c r="A1" t="str"><f>x</f><v>TRUE</v></c>',
    ]);
    const big = `<c r="A1" t="b"><f>${'x'.repeat(70_000)}`;
    expect(await all(big, '</f><v>1</v></c>')).toEqual([big, '</f><v>1</v></c>']);
    // A small one far into the sheet waits all the same; a closed one never does.
    const before = '<c r="Z1"><v>1</v></c>'.repeat(4_000);
    expect(await all(`${before}<c r="A1" t="b"><f>x`, '</f><v>1</v></c>')).toEqual([
      before,
      '<c r="A1" t="str"><f>x</f><v>TRUE</v></c>',
    ]);
    expect(await all('<c r="A1" t="b"/>', '<c r="B1"/>')).toEqual([
      '<c r="A1" t="b"/>',
      '<c r="B1"/>',
    ]);
    expect(await all('<cols><col min="1"/>', '</cols>')).toEqual([
      '<cols><col min="1"/>',
      '</cols>',
    ]);
  });
});

describe('formulas never calculated (exceljs and openpyxl save no result)', () => {
  it('read as empty, and a warning names their column, a row and the formula (regression: empty with no word, a row sent without its email)', async () => {
    const path = join(dir, 'uncalculated.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['First Name', 'Company', 'Note', 'Email']);
    ws.addRow(['Ann', 'Acme', { formula: 'A2', result: '' }, 'ann@acme.com']);
    for (let r = 3; r <= 5; r++)
      ws.addRow(['Bob', 'Acme', 'x', { formula: `LOWER(A${r})&"@acme.com"` }]);
    ws.addRow(['Cy', 'Acme', { formula: 'LEN(A6)' }, { formula: 'A6', result: 'cy@acme.com' }]);
    await wb.xlsx.writeFile(path);
    const { source, rows } = await rowsOf(path);
    expect(rows.map((r) => r.cells)).toEqual([
      ['Ann', 'Acme', '', 'ann@acme.com'],
      ['Bob', 'Acme', 'x', ''],
      ['Bob', 'Acme', 'x', ''],
      ['Bob', 'Acme', 'x', ''],
      ['Cy', 'Acme', '', 'cy@acme.com'],
    ]);
    expect(rows[1]!.values).toEqual(['Bob', 'Acme', 'x', null]);
    expect(source.warnings).toEqual([
      `${path}: columns "Note" (C), "Email" (D) hold formulas the program that wrote the workbook never calculated (row 3: =LOWER(A3)&"@acme.com"): they read as empty; open and save the workbook in Excel or LibreOffice to calculate them, then run again`,
    ]);
  });

  it('below the rows read at open, the first is told once, when a pass reaches it', async () => {
    const path = join(dir, 'uncalculated-late.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Name', 'Email']);
    for (let r = 2; r <= 80; r++)
      ws.addRow([`n${r}`, { formula: `A${r}&"@acme.com"`, result: `n${r}@acme.com` }]);
    for (let r = 81; r <= 83; r++) ws.addRow([`n${r}`, { formula: `A${r}&"@acme.com"` }]);
    await wb.xlsx.writeFile(path);
    const told: string[] = [];
    const source = await openInput(path, { onWarning: (w) => told.push(w) });
    try {
      expect(source.warnings).toEqual([]);
      for (let pass = 0; pass < 2; pass++) {
        const rows = [];
        for await (const r of source.rows()) rows.push(r);
        expect(rows.at(-1)?.cells).toEqual(['n83', '']);
      }
    } finally {
      await source.close();
    }
    expect(told).toEqual([
      `${path}: column "Email" (B) holds formulas the program that wrote the workbook never calculated (row 81: =A81&"@acme.com"): they read as empty; open and save the workbook in Excel or LibreOffice to calculate them, then run again`,
    ]);
  });

  it('a workbook whose formulas all have results (an empty text one too) gets no warning', async () => {
    const path = join(dir, 'calculated.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Company', 'Score']);
    ws.addRow(['a@acme.com', { formula: 'A1', result: '' }, { formula: '2*3', result: 6 }]);
    await wb.xlsx.writeFile(path);
    const { source, rows } = await rowsOf(path);
    expect(rows.map((r) => r.cells)).toEqual([['a@acme.com', '', '6']]);
    expect(source.warnings).toEqual([]);
  });

  it('is marked wherever a chunk of the sheet ends: no value, an empty one, a shared copy, a text cell with no value; a result of empty text is none', async () => {
    const xml =
      '<row r="2"><c r="A2"><f>LOWER(B2)</f></c><c r="B2" s="1" t="n"><f>A1&amp;&quot;x&quot;</f><v></v></c>' +
      '<c r="C2" t="str"><f>""</f><v></v></c><c r="D2"><f t="shared" ref="D2:D3" si="0"/><v/></c>' +
      '<c r="E2"><f>1+1</f><v>2</v></c><c r="F2"/><c r="G2" t="str"><f>B1</f></c></row>';
    const want =
      '<row r="2"><c r="A2" t="e"><v>#UNCALCULATED=LOWER(B2)</v></c><c r="B2" s="1" t="e"><v>#UNCALCULATED=A1&amp;&quot;x&quot;</v></c>' +
      '<c r="C2" t="str"><f>""</f><v></v></c><c r="D2" t="e"><v>#UNCALCULATED=…</v></c>' +
      '<c r="E2"><f>1+1</f><v>2</v></c><c r="F2"/><c r="G2" t="e"><v>#UNCALCULATED=B1</v></c></row>';
    await expectAtEveryCut(formulaResultsAsText, xml, want);
  });

  it('names a column without a header by its letters', () => {
    const row = (line: number, column: number) => ({
      cells: [],
      values: [],
      line,
      uncalculated: [{ column, formula: `=X${line}` }],
    });
    expect(uncalculatedWarning('f.xlsx', ['Email'], [row(7, 27), row(8, 27)])).toBe(
      'f.xlsx: column AB holds formulas the program that wrote the workbook never calculated (row 7: =X7): they read as empty; open and save the workbook in Excel or LibreOffice to calculate them, then run again',
    );
    expect(uncalculatedWarning('f.xlsx', ['Email'], [{ cells: [], values: [], line: 2 }])).toBe(
      undefined,
    );
  });
});

describe('a workbook the reader cannot read', () => {
  it('rows or cells without their reference ("r", optional in the standard) are refused with what to do, not internals alone', async () => {
    const path = join(dir, 'referenced.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Company']);
    ws.addRow(['a@acme.com', 'Acme']);
    await wb.xlsx.writeFile(path);
    const sheetPart = (name: string) => /worksheets\/sheet\d+\.xml$/.test(name);
    const variants: [string, (xml: string) => string][] = [
      ['no-refs.xlsx', (xml) => xml.replace(/ r="[A-Z]*\d+"/g, '')],
      ['no-row-refs.xlsx', (xml) => xml.replace(/(<row[^>]*?) r="\d+"/g, '$1')],
    ];
    for (const [name, strip] of variants) {
      const bare = join(dir, name);
      await restored(
        path,
        bare,
        (names) => names,
        (part, text) => [part, sheetPart(part) ? strip(text) : text],
      );
      const err = await openInput(bare).then(
        () => undefined,
        (e: unknown) => e as EnrichError,
      );
      expect(err).toMatchObject({
        code: 'INPUT_UNREADABLE',
        message: expect.stringMatching(
          new RegExp(
            `^cannot read ${bare} as a workbook: its sheet is laid out in a way the reader does not support, such as rows or cells without their reference \\(the "r" attribute\\)( \\(Invalid Address: [^)]*\\))?$`,
          ),
        ),
        hint: 'Open it in Excel or LibreOffice and save it again as .xlsx, or export it as CSV.',
        location: { file: bare },
      });
    }
  });

  it("any other failure keeps the reader's own words", () => {
    const err = unreadableWorkbook('x.xlsx', new Error('unexpected end of file'));
    expect(err.message).toBe('cannot read x.xlsx as a workbook: unexpected end of file');
    expect(err.hint).toBeUndefined();
  });

  it('a JavaScript error inside the reader leaks none of its words (regression: "Cannot read properties of undefined")', () => {
    for (const internal of [
      new TypeError("Cannot read properties of undefined (reading 'sheets')"),
      new RangeError('Invalid array length'),
    ]) {
      const err = unreadableWorkbook('x.xlsx', internal);
      expect(err.message).toBe(
        'cannot read x.xlsx as a workbook: its sheet is laid out in a way the reader does not support, such as rows or cells without their reference (the "r" attribute)',
      );
      expect(err.hint).toMatch(/save it again/);
    }
  });
});

describe('the workbook read through its central directory', () => {
  it('keeps every character of a long sheet whole (no U+FFFD where a chunk ended)', async () => {
    const path = join(dir, 'accents.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Id', 'Name']);
    const name = (i: number) => `東京都千代田区丸の内${i} Müller-Lüdenscheidt José Ñandú`;
    for (let i = 0; i < 5000; i++) ws.addRow([i, name(i)]);
    await wb.xlsx.writeFile(path);
    const { rows } = await rowsOf(path);
    expect(rows).toHaveLength(5000);
    // exceljs's own reader decoded each 16 KB chunk alone: 8 of these rows lost a character.
    expect(rows.filter((r, i) => r.cells[1] !== name(i)).map((r) => r.cells[1])).toEqual([]);
  });

  it('reads the same rows whatever order the parts are stored in', async () => {
    const path = join(dir, 'order.xlsx');
    await writeContactsWorkbook(path, 40, { notesFirst: true });
    const want = (await rowsOf(path, { sheet: 'Leads' })).rows.map((r) => r.cells);
    expect(want).toHaveLength(40);
    expect(want[39]![3]).toBe('Company 39');
    // Excel's order: the workbook first, the shared strings after the sheets; and the reverse.
    const excel = (n: string[]) => [
      ...n.filter((x) => !x.startsWith('xl/worksheets/') && x !== 'xl/sharedStrings.xml'),
      ...n.filter((x) => x.startsWith('xl/worksheets/')),
      'xl/sharedStrings.xml',
    ];
    for (const order of [excel, (n: string[]) => [...n].reverse()]) {
      const moved = join(dir, 'moved.xlsx');
      await restored(path, moved, order);
      expect((await rowsOf(moved, { sheet: 2 })).rows.map((r) => r.cells)).toEqual(want);
    }
    // Sheet targets written as absolute paths (openpyxl does) name the same sheets.
    const absolute = join(dir, 'absolute.xlsx');
    await restored(
      path,
      absolute,
      (n) => n,
      (name, text) => [
        name,
        name === 'xl/_rels/workbook.xml.rels'
          ? text.replace(/Target="worksheets\//g, 'Target="/xl/worksheets/')
          : text,
      ],
    );
    expect((await rowsOf(absolute, { sheet: 'leads' })).rows.map((r) => r.cells)).toEqual(want);
  });

  it('finds the parts through the package relationships, whatever their names and case', async () => {
    const path = join(dir, 'named.xlsx');
    await writeContactsWorkbook(path, 5, { notesFirst: true });
    const want = (await rowsOf(path, { sheet: 'Leads' })).rows.map((r) => r.cells);
    const renamed: Record<string, string> = {
      'xl/workbook.xml': 'xl/Book.xml',
      'xl/_rels/workbook.xml.rels': 'xl/_rels/Book.xml.rels',
      'xl/sharedStrings.xml': 'xl/strings/Shared.xml',
      'xl/styles.xml': 'XL/Styles.XML',
    };
    const moved = join(dir, 'named-moved.xlsx');
    await restored(
      path,
      moved,
      (n) => n,
      (name, text) => [
        renamed[name] ?? name,
        text
          .replace('Target="xl/workbook.xml"', 'Target="xl/Book.xml"')
          .replace('Target="sharedStrings.xml"', 'Target="./strings/Shared.xml"')
          .replace(/Target="worksheets\//g, 'Target="../xl/worksheets/')
          // A relationship without a type (malformed), first, is passed over.
          .replace('<Relationship ', '<Relationship Id="rId99" Target="x.xml"/><Relationship '),
      ],
    );
    const names = Object.keys((await JSZip.loadAsync(await readFile(moved))).files);
    expect(names).toContain('xl/strings/Shared.xml');
    expect(names).not.toContain('xl/workbook.xml');
    const { rows } = await rowsOf(moved, { sheet: 'leads' });
    expect(rows.map((r) => r.cells)).toEqual(want);
    expect(rows[0]!.cells[5]).toBe('2024-01-01'); // the styles were found: a date, not a number
  });

  it('without a workbook part, reads the sheets by their numbers', async () => {
    const path = join(dir, 'bare.xlsx');
    await writeContactsWorkbook(path, 4, { notesFirst: true });
    const want = (await rowsOf(path, { sheet: 'Leads' })).rows.map((r) => r.cells);
    const bare = join(dir, 'bare-moved.xlsx');
    const gone = ['_rels/.rels', 'xl/workbook.xml', 'xl/_rels/workbook.xml.rels'];
    // Stored last sheet first; the shared strings and styles found under their usual names.
    await restored(path, bare, (n) => [...n].reverse().filter((x) => !gone.includes(x)));
    // Without the package's relationships, nor the workbook's to its strings and styles, the
    // parts are found under their usual names.
    const unrelated = join(dir, 'bare-unrelated.xlsx');
    await restored(
      path,
      unrelated,
      (n) => n.filter((x) => x !== '_rels/.rels'),
      (name, text) => [
        name,
        name === 'xl/_rels/workbook.xml.rels'
          ? text.replace(/<Relationship [^>]*(sharedStrings|styles)"[^>]*\/>/g, '')
          : text,
      ],
    );
    const unrelatedRels = await (
      await JSZip.loadAsync(await readFile(unrelated))
    )
      .file('xl/_rels/workbook.xml.rels')!
      .async('string');
    expect(unrelatedRels).not.toMatch(/styles|sharedStrings/);
    expect((await rowsOf(unrelated, { sheet: 'Leads' })).rows.map((r) => r.cells)).toEqual(want);
    await expect(openInput(bare, { sheet: 'Leads' })).rejects.toThrow(
      /has no sheet "Leads": expected one of "Sheet1", "Sheet2"/,
    );
    expect((await rowsOf(bare, { sheet: 2 })).rows.map((r) => r.cells)).toEqual(want);
    // A sheet the workbook lists but the zip lacks is left out; one without styles shows numbers.
    const partial = join(dir, 'bare-partial.xlsx');
    const lacking = ['xl/worksheets/sheet1.xml', 'xl/styles.xml'];
    await restored(path, partial, (n) => n.filter((x) => !lacking.includes(x)));
    await expect(openInput(partial, { sheet: 'Notes' })).rejects.toThrow(
      /has no sheet "Notes": expected one of "Leads"/,
    );
    const plain = (await rowsOf(partial, { sheet: 1 })).rows.map((r) => r.cells);
    expect(plain.map((c) => c.slice(0, 5))).toEqual(want.map((c) => c.slice(0, 5)));
    expect(plain[0]![5]).toBe('45292'); // 2024-01-01 as the serial number it is stored as
  });

  it('without a workbook part, numbers the sheets as numbers (sheet10 after sheet9)', async () => {
    const path = join(dir, 'eleven.xlsx');
    const wb = new ExcelJS.Workbook();
    for (let n = 1; n <= 11; n++) wb.addWorksheet(`Tab ${n}`).addRow([`Header ${n}`]);
    await wb.xlsx.writeFile(path);
    const bare = join(dir, 'eleven-bare.xlsx');
    await restored(
      path,
      bare,
      (n) => n.filter((x) => x !== 'xl/workbook.xml').reverse(),
      // A copy kept in a folder of its own is no sheet of this workbook.
      (name, text) => [
        name === 'xl/worksheets/sheet3.xml' ? 'old/xl/worksheets/sheet3.xml' : name,
        text,
      ],
    );
    await expect(openInput(bare, { sheet: 'Nope' })).rejects.toThrow(
      /expected one of "Sheet1", "Sheet2", "Sheet4", "Sheet5", "Sheet6", "Sheet7", "Sheet8", "Sheet9", "Sheet10", "Sheet11"$/,
    );
    expect((await rowsOf(bare, { sheet: 'Sheet10' })).source.rawHeader).toEqual(['Header 10']);
    expect((await rowsOf(bare, { sheet: 9 })).source.rawHeader).toEqual(['Header 10']);
  });

  it('reads a workbook SheetJS wrote (its workbook part after the sheets: refused before)', async () => {
    // fixtures/inputs/sheetjs-leads.xlsx: written by SheetJS (xlsx 0.18.5) with its defaults,
    // XLSX.utils.aoa_to_sheet(rows, { cellDates: true }) into a "Notes" and a "Leads" sheet.
    const path = fileURLToPath(
      new URL('../../fixtures/inputs/sheetjs-leads.xlsx', import.meta.url),
    );
    const { source, rows } = await rowsOf(path, { sheet: 'Leads' });
    expect(source.rawHeader).toEqual([
      'Email',
      'First Name',
      'Last Name',
      'Company',
      'Phone',
      'Signed up',
    ]);
    expect(rows).toHaveLength(12);
    const first = ['Jürgen', '東京', 'Zoë', 'Łukasz'];
    expect(rows.map((r) => r.cells[1])).toEqual(Array.from({ length: 12 }, (_, k) => first[k % 4]));
    expect(rows[11]!.cells).toEqual([
      'lead11@acme11.com',
      'Łukasz',
      'Müller',
      'Acme Ünited',
      '12025550011',
      '2024-01-12',
    ]);
    expect((await rowsOf(path)).rows[0]?.cells ?? []).toEqual([]); // "Notes": its one cell is the header
  });

  it('closes the file when a read stops early or fails', async () => {
    const path = join(dir, 'fds.xlsx');
    await writeContactsWorkbook(path, 5000); // a sheet far longer than what is read of it
    const broken = join(dir, 'fds-broken.xlsx');
    await restored(
      path,
      broken,
      (n) => n,
      (name, text) => [name, name === 'xl/workbook.xml' ? '<workbook><sheets></workbook>' : text],
    );
    const open = async () => (await readdir('/proc/self/fd')).length;
    const before = await open();
    for (let i = 0; i < 20; i++) {
      for await (const row of readXlsxRows(path, { name: 'fds.xlsx' })) if (row.line > 5) break;
      await expect(async () => {
        for await (const _ of readXlsxRows(path, { name: 'fds.xlsx', sheet: 'Nope' }));
      }).rejects.toThrow(/has no sheet "Nope": expected one of "Leads"/);
      await expect(async () => {
        for await (const _ of readXlsxRows(broken, { name: 'fds-broken.xlsx' }));
      }).rejects.toThrow(/cannot read fds-broken.xlsx as a workbook: /);
    }
    expect(await open()).toBeLessThanOrEqual(before);
  });

  it('names the file when the zip is cut short', async () => {
    const path = join(dir, 'cut.xlsx');
    await writeContactsWorkbook(path, 50);
    const whole = await readFile(path);
    await writeFile(path, whole.subarray(0, whole.length - 40));
    await expect(async () => {
      for await (const _ of readXlsxRows(path, { name: 'cut.xlsx' }));
    }).rejects.toThrow(/cannot read cut.xlsx as a workbook: .*central directory/);
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

describe('text as Excel shows it: phonetic guides and rich inline text', () => {
  const guide = (text: string, reading: string) =>
    `<t>${text}</t><rPh sb="0" eb="${text.length}"><t>${reading}</t></rPh><phoneticPr fontId="1" type="noConversion"/>`;

  it('a phonetic guide (rPh, Japanese Excel) is not the text, in shared or inline strings; inline rich text keeps every run (regression: タナカ for 田中, "me Inc" for "Acme Inc")', async () => {
    const path = join(dir, 'jp-src.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', '姓', '会社', 'Note']);
    ws.addRow(['tanaka@sony.co.jp', '田中', 'x', 'y']);
    await wb.xlsx.writeFile(path);
    const jp = join(dir, 'jp.xlsx');
    const inline = (ref: string, body: string) => (xml: string) =>
      xml.replace(
        new RegExp(`<c r="${ref}"[^>]*?(/>|>[\\s\\S]*?</c>)`),
        `<c r="${ref}" t="inlineStr"><is>${body}</is></c>`,
      );
    const sheet = [
      inline('C2', '<r><t>Ac</t></r><r><rPr><i/></rPr><t xml:space="preserve">me Inc</t></r><t/>'),
      inline(
        'D2',
        `<r><t>ソニー</t></r><r><t>株式会社</t></r><rPh sb="0" eb="3"><t>ソニー</t></rPh>`,
      ),
    ];
    await restored(
      path,
      jp,
      (names) => names,
      (name, text) => [
        name,
        name.endsWith('sharedStrings.xml')
          ? text
              .replace('<t>姓</t>', guide('姓', 'セイ'))
              .replace('<t>田中</t>', guide('田中', 'タナカ'))
          : /worksheets\/sheet1\.xml$/.test(name)
            ? sheet.reduce((xml, f) => f(xml), text)
            : text,
      ],
    );
    const { source, rows } = await rowsOf(jp);
    expect(source.header).toEqual(['Email', '姓', '会社', 'Note']);
    expect(rows.map((r) => r.cells)).toEqual([
      ['tanaka@sony.co.jp', '田中', 'Acme Inc', 'ソニー株式会社'],
    ]);
  });

  it('wherever a chunk ends', async () => {
    const strings = `<sst><si>${guide('田中', 'タナカ')}</si><si><r><t>A</t></r><rPh sb="0" eb="1"/><r><t>B</t></r></si></sst>`;
    const sheet =
      '<row r="1"><c r="A1" t="inlineStr"><is><r><t>Ac</t></r><rPh sb="0" eb="1"><t>エー</t></rPh><r><t>me</t></r></is></c><c r="B1"><v>1</v></c></row>';
    const cases: [(c: AsyncIterable<string>) => AsyncIterable<string>, string, string][] = [
      [
        phoneticGuidesDropped,
        strings,
        '<sst><si><t>田中</t></si><si><r><t>A</t></r><r><t>B</t></r></si></sst>',
      ],
      [
        formulaResultsAsText,
        sheet,
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Acme</t></is></c><c r="B1"><v>1</v></c></row>',
      ],
    ];
    for (const [rewrite, xml, want] of cases) await expectAtEveryCut(rewrite, xml, want);
  });
});

describe('namespace-prefixed SpreadsheetML (OpenXML SDK, .NET exporters)', () => {
  const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  /** A part written with `prefix:` on every element of its default namespace. */
  const prefixed = (xml: string, prefix: string) => {
    const ns = /<(?![?!])[^>]*\sxmlns="([^"]*)"/.exec(xml)?.[1];
    if (ns !== MAIN) return xml;
    return xml
      .replace(` xmlns="${MAIN}"`, ` xmlns:${prefix}="${MAIN}"`)
      .replace(/<(\/?)(?![?!])([A-Za-z][\w.-]*)(?=[\s/>])/g, `<$1${prefix}:$2`);
  };

  it('reads a workbook whose workbook, sheets, shared strings and styles use a prefix, whatever it is (regression: "an empty sheet", a leaked TypeError)', async () => {
    const path = join(dir, 'unprefixed.xlsx');
    await writeContactsWorkbook(path, 20, { notesFirst: true });
    const want = (await rowsOf(path, { sheet: 'Leads' })).rows.map((r) => r.cells);
    expect(want[0]![5]).toBe('2024-01-01');
    for (const prefix of ['x', 'main.s-1']) {
      const moved = join(dir, `prefixed-${prefix}.xlsx`);
      await restored(
        path,
        moved,
        (n) => n,
        (name, text) => [name, prefixed(text, prefix)],
      );
      const sheet = await readFile(moved).then(async (b) =>
        (await JSZip.loadAsync(b)).file('xl/worksheets/sheet2.xml')!.async('string'),
      );
      expect(sheet).toContain(`<${prefix}:sheetData>`);
      expect(sheet).not.toContain('<sheetData>');
      const { rows } = await rowsOf(moved, { sheet: 'Leads' });
      expect(rows.map((r) => r.cells)).toEqual(want);
    }
  });

  it('drops only the prefix bound to SpreadsheetML, wherever a chunk ends', async () => {
    const xml =
      `<?xml version="1.0"?><x:worksheet xmlns:x="${MAIN}" xmlns:mc="urn:mc">` +
      '<x:sheetData><x:row r="1"><x:c r="A1" t="s"><x:v>0</x:v></x:c></x:row></x:sheetData>' +
      '<mc:AlternateContent/><xy:z/></x:worksheet>';
    const want =
      `<?xml version="1.0"?><worksheet xmlns:x="${MAIN}" xmlns:mc="urn:mc">` +
      '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData>' +
      '<mc:AlternateContent/><xy:z/></worksheet>';
    const plain = `<worksheet xmlns="${MAIN}"><sheetData/></worksheet>`;
    // The namespace declared in single quotes (XML allows either) binds the prefix too.
    const single = `<x:worksheet xmlns:x='${MAIN}'><x:sheetData/></x:worksheet>`;
    const singleWant = `<worksheet xmlns:x='${MAIN}'><sheetData/></worksheet>`;
    for (const [from, to] of <[string, string][]>[
      [xml, want],
      [plain, plain],
      [single, singleWant],
    ]) {
      await expectAtEveryCut(namespacePrefixDropped, from, to);
    }
  });
});

/** A chunk rewrite gives `want` for `xml` cut in two at every place (a tag cut at a chunk's end). */
async function expectAtEveryCut(
  rewrite: (chunks: AsyncIterable<string>) => AsyncIterable<string>,
  xml: string,
  want: string,
) {
  for (let cut = 0; cut <= xml.length; cut++) {
    let out = '';
    for await (const part of rewrite(
      (async function* () {
        yield xml.slice(0, cut);
        yield xml.slice(cut);
      })(),
    ))
      out += part;
    expect(out, `cut at ${cut}`).toBe(want);
  }
}

/** A workbook of one row: `Email`, then a column per [header, value, number format]. */
async function formatted(path: string, cols: [string, number, string][]) {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Leads');
  ws.addRow(['Email', ...cols.map((c) => c[0])]);
  const row = ws.addRow(['a@acme.com', ...cols.map((c) => c[1])]);
  cols.forEach(([, , fmt], i) => {
    row.getCell(i + 2).numFmt = fmt;
  });
  await wb.xlsx.writeFile(path);
}

/** An input's rows written to an `.xlsx` output, read back by exceljs. */
async function writtenBack(path: string) {
  const source = await openInput(path);
  const target = `${path}.out.xlsx`;
  const w = await createOutputWriter({
    target,
    format: 'xlsx',
    inputHeader: source.header,
    jsonKeys: source.header,
    extraColumns: [],
  });
  for await (const input of source.rows())
    await w.write({
      row: input.index + 1,
      input,
      status: 'enriched',
      error: '',
      creditCharged: true,
      values: [],
    });
  await w.close();
  await source.close();
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(target);
  return wb.worksheets[0]!.getRow(2);
}

describe('zero-padded number formats (ZIP codes, ids)', () => {
  it('a number in a format of zeros and literal text reads as Excel shows it, and is written as that text (regression: 02134 read as 2134)', async () => {
    const path = join(dir, 'zips.xlsx');
    const cols: [string, number, string][] = [
      ['Zip', 2134, '00000'],
      ['Employee ID', 42, '000000'],
      ['Zip+4', 21341234, '00000-0000'],
      ['SSN', 12345678, '000-00-0000'],
      ['Badge', 7, '"ID-"0000'],
      ['Count', 7, '0'],
      ['Revenue', 1234, '#,##0'],
      ['Rounded', 2134.6, '00000'],
      ['Ratio', 5.5, '000.00'],
      ['Score', 2134.6, '000.00'],
    ];
    await formatted(path, cols);
    const { rows } = await rowsOf(path);
    expect(rows[0]!.cells).toEqual([
      'a@acme.com',
      '02134',
      '000042',
      '02134-1234',
      '012-34-5678',
      'ID-0007',
      '7',
      '1234',
      '02135',
      '005.50',
      '2134.60',
    ]);
    const out = await writtenBack(path);
    expect(out.getCell(2).value).toBe('02134');
    expect(out.getCell(2).type).toBe(ExcelJS.ValueType.String);
    expect(out.getCell(6).value).toBe('ID-0007');
    expect(out.getCell(7).value).toBe(7); // nothing added: a number still
    expect(out.getCell(8).value).toBe(1234);
    // Rounded to what Excel shows: the text when zeros were added, else the number itself.
    expect([9, 10, 11].map((c) => out.getCell(c).value)).toEqual(['02135', '005.50', 2134.6]);
  });

  it.each([
    [2134, '00000', '02134'],
    [123456, '00000', undefined], // more digits than zeros: shown whole, as it is
    [1234567890, '00000-0000', '123456-7890'], // the extra digit goes to the first run
    [-42, '0000', '-0042'],
    [5, '\\#00', '#05'],
    [0, '00', '00'],
    // Sections (regression: read as the digits, 1234.5 where Excel shows 01235 and (01235)):
    // positive; negative without its sign; zero; text only for a section of quoted text.
    [5, '00;(00)', '05'],
    [1234.5, '00000;(00000)', '01235'],
    [-1234.5, '00000;(00000)', '(01235)'],
    [-1234.5, '00000;-00000', '-01235'],
    [-1234.5, '00000', '-01235'],
    [-3, '00000', '-00003'],
    [0, '00000;-00000;"none"', 'none'],
    [0, '00000;(00000)', '00000'], // no zero section: the first serves
    [-5, '00000;;"none"', undefined], // an empty section (Excel shows nothing): the digits, not lost
    [7, '"a;b"000', 'a;b007'], // a ; in quotes is text
    [5, '0;(0)', undefined], // nothing padded in the section used
    [5, '[Red]00;00', undefined],
    [5, '0.00', undefined], // nothing padded: the number's digits
    [2134.4, '0', undefined],
    [2134.6, '00000', '02135'], // rounded as Excel shows it (regression: 2134.6)
    [2134.5, '00000', '02135'], // half away from zero
    [-2134.5, '00000', '-02135'],
    [99999.5, '00000', '100000'],
    [12.35, '0000.0', '0012.4'], // 12.35 is 12.3499… in binary; Excel shows 12.4
    [2.675, '000.00', '002.68'],
    [0.004, '000.00', '000.00'],
    [1234.5, '000.00', '1234.50'],
    [21341234.4, '00000-0000', '02134-1234'],
    [6.5, '"ID-"0000', 'ID-0007'],
    [6.5, '"ID-"0', 'ID-7'],
    [5.25, '00.0" kg"', '05.3 kg'],
    [5, '00.0"x"0', undefined], // a placeholder after text in the fraction: not read this way
    [5, '0.0.0', undefined],
    [5, '.00', undefined],
    [5, '[Red]00', undefined],
    [5, '00%', undefined],
    [5, '"unclosed 00', undefined],
    [5, '"literal only"', undefined],
  ])('%s in %s shows as %s', (n, fmt, shown) => {
    expect(zeroPadded(n, fmt)).toBe(shown);
  });
});

describe('time-only number formats', () => {
  it('a time-only cell reads as an ISO 8601 time and is written back as a time (regression: 1899-12-30T18:00:00)', async () => {
    const path = join(dir, 'times.xlsx');
    await formatted(path, [
      ['Call', 0.75, 'h:mm'],
      ['Meeting', 0.395833333333333, 'hh:mm'],
      ['Logged', 45000.5, 'h:mm:ss AM/PM'], // a date part the format does not show
      ['Duration', 1.5, '[h]:mm:ss'],
      ['Lap', 0.00123, 'mm:ss'],
      ['Signed', 45000.5, 'yyyy-mm-dd hh:mm'],
      ['Month', 45000, 'mmm yyyy'],
    ]);
    const { rows } = await rowsOf(path);
    expect(rows[0]!.cells).toEqual([
      'a@acme.com',
      '18:00:00',
      '09:30:00',
      '12:00:00',
      '36:00:00',
      '00:01:46',
      '2023-03-15T12:00:00',
      '2023-03-15',
    ]);
    // The number kept, in a time format (exceljs reads a number in a time format as a Date).
    const out = await writtenBack(path);
    const day0 = (h: number, d = 0) => new Date(Date.UTC(1899, 11, 30 + d, h));
    expect([2, 3, 4, 5].map((c) => [out.getCell(c).value, out.getCell(c).numFmt])).toEqual([
      [day0(18), 'hh:mm:ss'],
      [new Date(Date.UTC(1899, 11, 30, 9, 30)), 'hh:mm:ss'],
      [new Date(Date.UTC(2023, 2, 15, 12)), 'hh:mm:ss'],
      [day0(12, 1), '[h]:mm:ss'],
    ]);
    expect(out.getCell(7).value).toEqual(new Date(Date.UTC(2023, 2, 15, 12)));
  });

  it('in a 1904 workbook too, and only for formats without a date', () => {
    const at = (days: number, date1904 = false) =>
      new Date(Date.UTC(1899, 11, 30) + (days + (date1904 ? 1462 : 0)) * 86_400_000);
    expect(timeOnly(at(1.5, true), '[h]:mm', true)).toMatchObject({
      text: '36:00:00',
      days: 1.5,
      elapsed: true,
    });
    expect(timeOnly(at(0.75, true), 'h:mm', true)?.text).toBe('18:00:00');
    expect(timeOnly(at(0.999999), 'h:mm:ss', false)?.text).toBe('00:00:00'); // rounds to the next second
    for (const fmt of ['[$-409]h:mm AM/PM', '[Red]hh:mm', 'h "h" mm', 'ss.00'])
      expect(timeOnly(at(0.75), fmt, false)?.text).toBe('18:00:00');
    for (const fmt of ['d/m/yyyy h:mm', 'mm/dd', 'mmm', 'dddd hh:mm', '"ss"yyyy'])
      expect(timeOnly(at(0.75), fmt, false)).toBeUndefined();
  });
});

describe('ISO 8601 date cells (t="d", as openpyxl writes them with iso_dates=True)', () => {
  /** Cell `ref` of the first sheet replaced by a date cell of ISO text `iso` (style 1 or none). */
  const dateCell =
    (ref: string, iso: string, body = '') =>
    (xml: string) =>
      xml.replace(
        new RegExp(`<c r="${ref}"[^>]*?(/>|>[\\s\\S]*?</c>)`),
        `<c r="${ref}" t="d"${ref.startsWith('B') ? ' s="1"' : ''}>${body}<v>${iso}</v></c>`,
      );

  it('reads as the date or time written, and is written back as a date cell (regression: 2024-03-01 read as 1905-07-16, 2023-12-31 as 2023)', async () => {
    const path = join(dir, 'tdate-src.xlsx');
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Leads');
    ws.addRow(['Email', 'Signed up', 'Renewal']);
    const iso: [string, string][] = [
      ['2024-03-01T00:00:00', '2023-12-31'],
      ['1999-07-04T09:30:00Z', '2024-03-01T09:30:00.000+00:00'],
      ['2024-03-01T09:30:00+09:00', '09:30:00'],
      ['2024-02-30', 'soon'],
    ];
    iso.forEach((_, i) => ws.addRow([`r${i}@acme.com`, 'x', 'y']));
    ws.getColumn(2).numFmt = 'yyyy-mm-dd h:mm:ss';
    await wb.xlsx.writeFile(path);
    const tdate = join(dir, 'tdate.xlsx');
    const edits = iso.flatMap(([b, c], i) => [
      dateCell(`B${i + 2}`, b),
      // A formula of a date cell: its cached result is the value.
      dateCell(`C${i + 2}`, c, i === 0 ? '<f>DATE(2023,12,31)</f>' : ''),
    ]);
    await restored(
      path,
      tdate,
      (n) => n,
      (name, text) => [
        name,
        /worksheets\/sheet1\.xml$/.test(name) ? edits.reduce((xml, f) => f(xml), text) : text,
      ],
    );
    const { rows } = await rowsOf(tdate);
    expect(rows.map((r) => r.cells.slice(1))).toEqual([
      ['2024-03-01', '2023-12-31'],
      ['1999-07-04T09:30:00', '2024-03-01T09:30:00'],
      ['2024-03-01T09:30:00+09:00', '09:30:00'], // another zone: the text as written
      ['2024-02-30', 'soon'], // no date: the text as written
    ]);
    const out = await writtenBack(tdate);
    expect(out.getCell(2).value).toEqual(new Date(Date.UTC(2024, 2, 1)));
    expect(out.getCell(2).numFmt).toBe('yyyy-mm-dd');
    expect(out.getCell(3).value).toEqual(new Date(Date.UTC(2023, 11, 31)));
    expect(out.getCell(3).type).toBe(ExcelJS.ValueType.Date);
  });

  it('is read whole wherever a chunk of the sheet ends', async () => {
    const xml =
      '<row r="2"><c r="A2" t="d" s="1"><v>2024-03-01</v></c><c r="B2" t="d"><f>TODAY()</f><v>2023-12-31T10:00:00</v></c>' +
      '<c r="C2" t="e"><v>#N/A</v></c><c r="D2" t="d"/></row>';
    const want =
      '<row r="2"><c r="A2" t="e" s="1"><v>2024-03-01</v></c><c r="B2" t="e"><v>2023-12-31T10:00:00</v></c>' +
      '<c r="C2" t="str"><v>#N/A</v></c><c r="D2" t="d"/></row>';
    await expectAtEveryCut(formulaResultsAsText, xml, want);
  });
});
