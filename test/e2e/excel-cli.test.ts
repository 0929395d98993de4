import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';
import { writeContactsWorkbook } from '../io/xlsx-fixture.js';

beforeAll(ensureBuilt, 120_000);

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function serviceEnv(): Promise<Record<string, string>> {
  sb = await startSandbox({ port: 0 });
  return { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
}

describe('the CLI with spreadsheets', () => {
  it('--sheet picks the sheet; -o .xlsx writes a workbook; --no-bom; stderr warns of the title row', async () => {
    const env = await serviceEnv();
    const dir = await tempDir();
    const file = join(dir, 'book.xlsx');
    await writeContactsWorkbook(file, 12, { notesFirst: true });
    const out = join(dir, 'out.xlsx');
    const r = await runCli(['contacts', file, '--sheet', 'Leads', '-o', out, '--no-progress'], {
      env,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/row 2 is taken as the header/);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    expect(wb.worksheets[0]!.getRow(2).getCell(1).value).toBe(100_000_000);
    // A workbook to CSV gets a BOM by default, none with --no-bom.
    const csv = join(dir, 'out.csv');
    const second = await runCli(['contacts', file, '--sheet', '2', '-o', csv], { env });
    expect(second.code, second.stderr).toBe(0);
    expect((await readFile(csv, 'utf8')).charCodeAt(0)).toBe(0xfeff);
    const bare = ['contacts', file, '--sheet', '2', '-o', csv, '--no-bom'];
    const third = await runCli(bare, { env });
    expect(third.code, third.stderr).toBe(0); // a failure says why (it once exited 2 under load)
    expect((await readFile(csv, 'utf8')).charCodeAt(0)).not.toBe(0xfeff);
  });

  it('refuses -o out.parquet and unknown --fields with exit 2, before sending anything', async () => {
    const env = await serviceEnv();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(3));
    const parquet = await runCli(['contacts', file, '-o', join(dir, 'out.parquet')], { env });
    expect(parquet.code).toBe(2);
    expect(parquet.stderr).toMatch(/Parquet is not a format enrich writes/);
    const fields = await runCli(['contacts', file, '-o', join(dir, 'o.csv'), '--fields', 'mail'], {
      env,
    });
    expect(fields.code).toBe(2);
    expect(fields.stderr).toMatch(/--fields: unknown field "mail"/);
    expect(fields.stderr).toMatch(/email, office_phone, mobile_phone/);
    expect(sb!.admin.stats().jobs_submitted).toBe(0);
  });
});
