import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import { openInput } from '../../src/io/read.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  runFile,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';
import { contactAt, SHEET_HEADER, writeContactsWorkbook } from '../io/xlsx-fixture.js';

const sandbox = sandboxPerTest();
const col = (rows: string[][], name: string) => {
  const i = rows[0]!.indexOf(name);
  return rows.slice(1).map((r) => r[i]);
};

describe('Excel and friends, end to end against the sandbox', () => {
  it('a workbook made by exceljs (title row, merged cell, ids, phones, dates) enriches into .xlsx with every input value unchanged', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = join(dir, 'leads.xlsx');
    const n = 120;
    await writeContactsWorkbook(file, n);
    const outputPath = join(dir, 'enriched.xlsx');
    const warnings: string[] = [];
    const { summary } = await runFile(s, file, {
      runsDir: dir,
      outputPath,
      format: 'xlsx',
      mapping: {
        map: { first_name: 'First Name', last_name: 'Last Name', company_name: 'Company' },
      },
      onWarning: (w) => warnings.push(w),
    });
    expect(summary.exitCode).toBe(0);
    expect(summary.statuses.enriched).toBe(n);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(outputPath);
    const ws = wb.worksheets[0]!;
    const header = (ws.getRow(1).values as unknown[]).slice(1);
    expect(header.slice(0, 6)).toEqual(SHEET_HEADER);
    expect(header.slice(6, 9)).toEqual(['enrich_status', 'enrich_error', 'enrich_credit_charged']);
    expect(header).toContain('enriched_email');
    for (let i = 0; i < n; i++) {
      const c = contactAt(i);
      const row = ws.getRow(i + 2);
      const values = (row.values as unknown[]).slice(1, 7);
      expect(values).toEqual([c.id, c.first, c.last, c.company, c.phone, c.signedUp]);
      expect(row.getCell(7).value).toBe('enriched');
    }
    const email = header.indexOf('enriched_email') + 1;
    expect(String(ws.getRow(2).getCell(email).value)).toMatch(/@/);
  });

  it('.csv.gz in, .jsonl.gz out: both gzip, rows as sent', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const rows = contactRows(30);
    const plain = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const file = join(dir, 'in.csv.gz');
    await writeFile(file, gzipSync(await readFile(plain)));
    const outputPath = join(dir, 'out.jsonl.gz');
    const { summary } = await runFile(s, file, { runsDir: dir, outputPath, format: 'jsonl' });
    expect(summary.statuses.enriched).toBe(30);
    const lines = gunzipSync(await readFile(outputPath))
      .toString('utf8')
      .trim()
      .split('\n');
    expect(lines).toHaveLength(30);
    const first = JSON.parse(lines[0]!) as { input: Record<string, string>; status: string };
    expect(first.input['Contact ID']).toBe(rows[0]![0]);
    expect(first.status).toBe('enriched');
  });

  it('an output it cannot write is refused before anything is sent', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(5));
    await expect(
      runFile(s, file, { runsDir: dir, outputPath: join(dir, 'out.parquet'), format: undefined }),
    ).rejects.toMatchObject({ code: 'USAGE', exitCode: 2 });
    expect(s.admin.stats().jobs_submitted).toBe(0);
  });

  it('a TSV input written as .csv gets commas; a Windows-1252 input gets a BOM', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = join(dir, 'in.tsv');
    const rows = contactRows(5).map((r) => r.map((c) => c.replace(/[,"]/g, '')));
    const text = [CONTACT_HEADER, ...rows].map((r) => r.join('\t')).join('\n') + '\n';
    await writeFile(file, text);
    const outputPath = join(dir, 'out.csv');
    const tsv = await runFile(s, file, { runsDir: dir, outputPath, format: undefined });
    expect(tsv.output.split('\n')[0]).toMatch(/^Contact ID,First Name,/);
    expect(tsv.output.charCodeAt(0)).not.toBe(0xfeff);

    await writeFile(file, iconv.encode(text, 'windows-1252'));
    const cp = await runFile(s, file, { runsDir: dir, outputPath, format: undefined });
    expect(cp.output.charCodeAt(0)).toBe(0xfeff);
    expect(cp.output).toContain('Zoë');
    const off = await runFile(s, file, { runsDir: dir, outputPath, format: undefined, bom: false });
    expect(off.output.charCodeAt(0)).not.toBe(0xfeff);
  });

  it('not_found apart from failed: exit 0, in the summary and the JSON', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(
      dir,
      'in.csv',
      CONTACT_HEADER,
      contactRows(20, { noMatchEvery: 5 }),
    );
    const { summary, output } = await runFile(s, file, { runsDir: dir });
    const out = parseCsv(output);
    expect(summary.statuses).toMatchObject({ enriched: 16, not_found: 4, failed: 0 });
    expect(summary.exitCode).toBe(0);
    expect(col(out, 'enrich_status')[0]).toBe('not_found');
    expect(col(out, 'enrich_credit_charged')[0]).toBe('false');
  });

  it('--fields writes only those enrichment columns; an unknown one lists the valid names', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(5));
    const fields = ['email', 'mobile_phone', 'company_website'];
    const { output, summary } = await runFile(s, file, { runsDir: dir, fields });
    expect(parseCsv(output)[0]!.slice(6)).toEqual([
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'enriched_email',
      'enriched_mobile_phone',
      'enriched_company_website',
    ]);
    expect(Object.keys(summary.fill)).toEqual(fields.map((f) => `enriched_${f}`));
    // JSON keeps only those fields of the record, nested as the record nests them.
    const json = await runFile(s, file, {
      runsDir: dir,
      fields,
      format: 'jsonl',
      outputPath: join(dir, 'out.jsonl'),
    });
    const record = (JSON.parse(json.output.split('\n')[0]!) as { record: Record<string, unknown> })
      .record;
    expect(Object.keys(record).sort()).toEqual(
      [
        'company',
        'credit_charged',
        'custom_fields',
        'email',
        'error',
        'mobile_phone',
        'original_fields',
      ]
        .filter((k) => k in record)
        .sort(),
    );
    expect(Object.keys(record.company as object)).toEqual(['website']);
    await expect(runFile(s, file, { runsDir: dir, fields: ['email', 'phone'] })).rejects.toThrow(
      /--fields: unknown field "phone"/,
    );
  });

  it('re-enriching an enriched file replaces its enrich_* and enriched_* columns, saying so', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(10));
    const first = await runFile(s, file, { runsDir: dir, outputPath: join(dir, 'once.csv') });
    const once = parseCsv(first.output);
    const second = await runFile(s, join(dir, 'once.csv'), {
      runsDir: dir,
      outputPath: join(dir, 'twice.csv'),
    });
    const twice = parseCsv(second.output);
    expect(twice[0]).toEqual(once[0]);
    expect(twice.filter((r) => r.length > 0).map((r) => r.slice(0, 6))).toEqual(
      once.filter((r) => r.length > 0).map((r) => r.slice(0, 6)),
    );
    // The mapping never sees the earlier output's columns, and the run says what it dropped.
    const source = await openInput(join(dir, 'once.csv'));
    const run = await resolveRun(
      { kind: 'contacts', output: join(dir, 'x.csv'), runsDir: dir },
      source,
    );
    await source.close();
    expect(run.source.header).toEqual(CONTACT_HEADER);
    expect(run.source.warnings.join('\n')).toMatch(
      /enriched before: its 24 enrich_\*\/enriched_\* columns are replaced/,
    );
  });
});
