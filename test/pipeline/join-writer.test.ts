import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noRecords } from '../../src/pipeline/join/join.js';
import { openJoinWriter } from '../../src/pipeline/join/join-writer.js';
import { numberedColumns } from '../../src/pipeline/join/output-columns.js';
import { company, csvOf, output, row, source } from '../helpers/join-writer-fixtures.js';

// The join writer (issue 21: mutants of join-writer.ts that no test saw): every paid match
// written, every row counted, the notes a row carries.

const col = (rows: string[][], name: string) => {
  const i = (rows[0] as string[]).indexOf(name);
  expect(i).toBeGreaterThanOrEqual(0);
  return rows.slice(1).map((r) => r[i]);
};

describe('the join writer', () => {
  it('numbers the columns of matches 2..n', () => {
    expect(numberedColumns(['a', 'b'], 3)).toEqual(['a_2', 'b_2', 'a_3', 'b_3']);
    expect(numberedColumns(['a'], 1)).toEqual([]);
  });

  it('--top 3 without --explode: every paid match in numbered columns, blanks where fewer came', async () => {
    const out = await output({ matches: 3, fields: ['name'] });
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company']),
      output: out,
      onRow: () => undefined,
    });
    const all = [company('a1'), company('a2'), company('a3')];
    await w.write(row(0, ['A']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: all,
    });
    await w.write(row(1, ['B']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [company('b1')],
    });
    const stats = await w.close();
    const rows = await csvOf(out.target);
    expect(rows[0]?.slice(-3)).toEqual(['enriched_name', 'enriched_name_2', 'enriched_name_3']);
    expect(rows.slice(1).map((r) => r.slice(-3))).toEqual([
      ['a1', 'a2', 'a3'],
      ['b1', '', ''],
    ]);
    expect(stats).toMatchObject({
      outputRows: 2,
      statuses: { enriched: 2 },
      fill: { enriched_name: 2 },
    });
  });

  it('--explode: one row per match with its rank; a row with one match or none is one row', async () => {
    const out = await output({ explode: true, matches: 2, fields: ['name'] });
    let rowsDone = 0;
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company']),
      output: out,
      onRow: () => void rowsDone++,
    });
    await w.write(row(0, ['A']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [company('a1'), company('a2')],
    });
    await w.write(row(1, ['B']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [company('b1')],
    });
    await w.write(row(2, ['C']), noRecords('missing', 'the job returned no result for this row'));
    const stats = await w.close();
    const rows = await csvOf(out.target);
    expect(rows.slice(1).map((r) => [r[0], r[5], r[6]])).toEqual([
      ['A', '1', 'a1'],
      ['A', '2', 'a2'],
      ['B', '1', 'b1'],
      ['C', '', ''],
    ]);
    expect(stats.outputRows).toBe(4);
    expect(stats.statuses).toMatchObject({ enriched: 2, missing: 1 });
    expect(rowsDone).toBe(3);
  });

  it('JSON keeps every match in records, without numbered columns or exploded rows', async () => {
    const out = await output({ format: 'json', explode: true, matches: 2, fields: ['name'] });
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company']),
      output: out,
      onRow: () => undefined,
    });
    await w.write(row(0, ['A']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [company('a1'), company('a2')],
      cachedAt: Date.UTC(2026, 0, 2),
    });
    const stats = await w.close();
    const [only] = JSON.parse(await readFile(out.target, 'utf8')) as {
      records: { name: string }[];
      cached_at: string;
    }[];
    expect(only?.records.map((r) => r.name)).toEqual(['a1', 'a2']);
    expect(only?.cached_at).toBe('2026-01-02T00:00:00.000Z');
    expect(stats.outputRows).toBe(1);
  });

  it('counts filled columns of enriched rows only, and notes a contact sent without its bad email', async () => {
    const out = await output({ fields: ['email', 'title'] });
    const rejects = join(out.target, '..', 'rejects.csv');
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email', 'First', 'Last', 'Company']),
      output: { ...out, rejects },
      mapping: { fields: { business_email: 0, first_name: 1, last_name: 2, company_name: 3 } },
      onRow: () => undefined,
    });
    const cells = ['bad@', 'Jane', 'Doe', 'Acme'];
    await w.write(row(0, cells), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [{ error: '', credit_charged: true, email: 'jane@acme.com', title: '' }],
    });
    await w.write(row(1, cells), {
      status: 'failed',
      error: 'Lookup failed',
      creditCharged: false,
      records: [],
    });
    await w.write(row(2, cells), noRecords('failed', 'not sent'));
    await w.write(row(3, ['x@y.co', '', '', '']), {
      status: 'not_found',
      error: 'No match',
      creditCharged: false,
      records: [{ error: 'No match', email: 'found@x.co' }],
    });
    await w.writeInvalid(row(4, ['', '', '', '']), {
      ok: false,
      error: 'needs an email',
      column: 'Email',
    });
    const stats = await w.close();
    const rows = await csvOf(out.target);
    const errors = col(rows, 'enrich_error');
    expect(errors[0]).toMatch(
      /^business_email left out \(not an email address: .*\); sent without it$/,
    );
    expect(errors[1]).toMatch(/^Lookup failed; business_email left out/);
    expect(errors[2]).toBe('not sent');
    expect(errors[4]).toBe('needs an email (column "Email")');
    expect(stats.fill).toEqual({ enriched_email: 1, enriched_title: 0 });
    expect(stats.statuses).toMatchObject({ enriched: 1, failed: 2, not_found: 1, invalid: 1 });
    const rejected = await csvOf(rejects);
    expect(rejected).toHaveLength(2);
    expect(rejected[1]?.slice(-1)).toEqual(['6']);
  });

  it('notes a company sent without a JSON object its name column held', async () => {
    const out = await output({ fields: ['name'] });
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company', 'Website']),
      output: out,
      mapping: { fields: { company_name: 0, company_website: 1 } },
      onRow: () => undefined,
    });
    const sent = {
      status: 'enriched' as const,
      error: '',
      creditCharged: true,
      records: [company('a')],
    };
    await w.write({ ...row(0, ['{"n":1}', 'acme.com']), nested: [true, false] }, sent);
    await w.write(row(1, ['Acme', 'acme.com']), sent);
    await w.close();
    expect(col(await csvOf(out.target), 'enrich_error')).toEqual([
      'company_name left out (column "Company" holds a JSON object or array, not text); sent without it',
      '',
    ]);
  });

  it('abort removes the output: nothing half-made is left', async () => {
    const out = await output({});
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email']),
      output: out,
      onRow: () => undefined,
    });
    await w.write(row(0, ['a@b.co']), noRecords('failed', 'x'));
    await w.abort();
    await expect(readFile(out.target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('the join writer in JSON', () => {
  it('contacts: each row with its 1-based number and its record (null without one), no numbered keys', async () => {
    const out = await output({ format: 'jsonl', matches: 3 });
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email']),
      output: out,
      onRow: () => undefined,
    });
    const rec = { error: '', credit_charged: true, email: 'a@x.co' };
    await w.write(row(0, ['a@x.co']), {
      status: 'enriched',
      error: '',
      creditCharged: true,
      records: [rec],
    });
    await w.write(row(1, ['b@x.co']), noRecords('missing', 'none'));
    await w.close();
    const lines = (await readFile(out.target, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.row, l.status])).toEqual([
      [1, 'enriched'],
      [2, 'missing'],
    ]);
    expect(lines[0]?.record).toMatchObject({ email: 'a@x.co' });
    expect(lines[1]?.record).toBeNull();
    expect(Object.keys(lines[0] ?? {})).not.toContain('records');
    expect(JSON.stringify(lines[0])).not.toContain('_2');
  });

  it.each([
    ['contacts', 'record', null],
    ['companies', 'records', []],
  ] as const)(
    '%s: the JSON rejects name the answer as the output does (%s; regression: companies said record), and the line (regression: none)',
    async (kind, key, empty) => {
      const out = await output({ format: 'jsonl' });
      const rejects = join(out.target, '..', 'rejects.jsonl');
      const w = await openJoinWriter({
        kind,
        source: source(['Company']),
        output: { ...out, rejects },
        onRow: () => undefined,
      });
      const invalid = row(0, ['']);
      await w.writeInvalid(invalid, { ok: false, error: 'needs a name' } as never);
      await w.close();
      const lineOf = async (path: string) =>
        JSON.parse((await readFile(path, 'utf8')).trimEnd()) as Record<string, unknown>;
      const [written, rejected] = [await lineOf(out.target), await lineOf(rejects)];
      expect(written).toMatchObject({ status: 'invalid', [key]: empty });
      expect(rejected).toMatchObject({ status: 'invalid', [key]: empty });
      // The rejects also say the input line each row starts on (the CSV rejects' enrich_line).
      expect(Object.keys(rejected)).toEqual(['row', 'line', ...Object.keys(written).slice(1)]);
      expect(rejected.line).toBe(invalid.line);
    },
  );
});
