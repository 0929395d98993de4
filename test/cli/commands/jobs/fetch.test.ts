import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { fetchFormat, writeFlattened } from '../../../../src/cli/commands/jobs/fetch.js';

const dir = await mkdtemp(join(tmpdir(), 'enrich-fetch-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('jobs fetch as CSV', () => {
  it('says what each record answers: original_fields as original_<field> columns, object or JSON text', async () => {
    const records = [
      {
        error: '',
        credit_charged: true,
        email: 'a@x.io',
        custom_fields: { row_id: '7' },
        original_fields: { business_email: 'a@x.io' },
      },
      // The spec allows the echo as the JSON text of an object.
      {
        error: '=HYPERLINK("x") no match',
        credit_charged: false,
        email: 'b@y.io',
        original_fields: '{"business_email":"b@y.io"}',
      },
    ];
    const out = join(dir, 'job.csv');
    await writeFlattened('contacts', records, out, 'csv');
    const [header, ...rows] = parse(await readFile(out, 'utf8')) as string[][];
    const col = (name: string) => header!.indexOf(name);
    expect(header!.slice(0, 4)).toEqual([
      'custom_fields',
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
    ]);
    expect(col('original_business_email')).toBeGreaterThan(0);
    expect(rows.map((r) => r[col('original_business_email')])).toEqual(['a@x.io', 'b@y.io']);
    expect(rows.map((r) => r[col('custom_fields')])).toEqual(['{"row_id":"7"}', 'null']);
    expect(rows.map((r) => r[col('enrich_status')])).toEqual(['enriched', 'failed']);
    expect(rows.map((r) => r[col('enrich_credit_charged')])).toEqual(['true', 'false']);
    // The shared writer's formula escaping applies to the service's text too.
    expect(rows[1]![col('enrich_error')]).toBe(`'=HYPERLINK("x") no match`);
  });

  it('TSV through the same writer', async () => {
    const out = join(dir, 'job.tsv');
    await writeFlattened('companies', [{ error: '', credit_charged: true }], out, 'tsv');
    const text = await readFile(out, 'utf8');
    expect(text.split('\n')[0]!.split('\t').slice(0, 2)).toEqual([
      'custom_fields',
      'enrich_status',
    ]);
  });

  it('XLSX through the same writer; -o names the format, .gz included; .parquet refused', async () => {
    expect(fetchFormat(undefined, 'job.xlsx')).toBe('xlsx');
    expect(fetchFormat(undefined, 'job.csv.gz')).toBe('csv');
    expect(fetchFormat(undefined, 'job.jsonl.gz')).toBe('jsonl');
    expect(() => fetchFormat(undefined, 'job.parquet')).toThrow(/cannot write Parquet/);
    const out = join(dir, 'job.xlsx');
    await writeFlattened(
      'companies',
      [{ error: '', credit_charged: true, name: 'Acme' }],
      out,
      'xlsx',
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(1).getCell(2).value).toBe('enrich_status');
    expect(ws.getRow(2).getCell(2).value).toBe('enriched');
  });
});
