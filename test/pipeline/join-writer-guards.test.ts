import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noRecords } from '../../src/pipeline/join/join.js';
import { openJoinWriter } from '../../src/pipeline/join/join-writer.js';
import { company, csvOf, output, row, source } from '../helpers/join-writer-fixtures.js';

// The join writer's guards (issue 21: mutants of join-writer.ts that no test saw): the
// columns of an exploded table, JSON Lines never exploded, counts of empty values, invalid
// rows without --rejects, and what abort and an unopenable rejects file leave on disk.

const enriched = (records: Record<string, unknown>[]) => ({
  status: 'enriched' as const,
  error: '',
  creditCharged: true,
  records,
});
const STATUS = ['enrich_status', 'enrich_error', 'enrich_credit_charged', 'enrich_cached_at'];

describe('the join writer', () => {
  it('--explode: the table has the rank column and the fields once, no numbered columns for --top', async () => {
    const out = await output({ explode: true, matches: 3, fields: ['name'] });
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company']),
      output: out,
      onRow: () => undefined,
    });
    await w.write(row(0, ['A']), enriched([company('a1'), company('a2')]));
    await w.close();
    const rows = await csvOf(out.target);
    expect(rows).toEqual([
      ['Company', ...STATUS, 'enrich_match_rank', 'enriched_name'],
      ['A', 'enriched', '', 'true', '', '1', 'a1'],
      ['A', 'enriched', '', 'true', '', '2', 'a2'],
    ]);
  });

  it('JSON Lines with --explode keeps one line per input row, every match in its records', async () => {
    const out = await output({ format: 'jsonl', explode: true, matches: 2, fields: ['name'] });
    const w = await openJoinWriter({
      kind: 'companies',
      source: source(['Company']),
      output: out,
      onRow: () => undefined,
    });
    await w.write(row(0, ['A']), enriched([company('a1'), company('a2')]));
    const stats = await w.close();
    const lines = (await readFile(out.target, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const only = JSON.parse(lines[0] ?? '') as { row: number; records: { name: string }[] };
    expect(only.row).toBe(1);
    expect(only.records.map((r) => r.name)).toEqual(['a1', 'a2']);
    expect(stats.outputRows).toBe(1);
  });

  it('counts a field of an enriched row as filled only when it has a value (null and missing are not)', async () => {
    const out = await output({ fields: ['email', 'title', 'mobile_phone'] });
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email']),
      output: out,
      onRow: () => undefined,
    });
    await w.write(
      row(0, ['a@x.co']),
      enriched([{ error: '', credit_charged: true, email: 'a@x.co', title: null }]),
    );
    const stats = await w.close();
    expect(stats.fill).toEqual({ enriched_email: 1, enriched_title: 0, enriched_mobile_phone: 0 });
  });

  it('writes an invalid row without --rejects: the output has it, nothing else is written', async () => {
    const out = await output({});
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email']),
      output: out,
      onRow: () => undefined,
    });
    await w.writeInvalid(row(0, ['']), { ok: false, error: 'needs an email', column: 'Email' });
    await w.write(row(1, ['b@x.co']), noRecords('failed', 'x'));
    const stats = await w.close();
    const rows = await csvOf(out.target);
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
      ['', 'invalid', 'needs an email (column "Email")'],
      ['b@x.co', 'failed', 'x'],
    ]);
    expect(stats.statuses).toMatchObject({ invalid: 1, failed: 1 });
    expect(await readdir(join(out.target, '..'))).toEqual(['out.csv']);
  });

  it('abort leaves nothing in the output directory: no output, no rejects, no temp file', async () => {
    const out = await output({});
    const rejects = join(out.target, '..', 'rejects.csv');
    const w = await openJoinWriter({
      kind: 'contacts',
      source: source(['Email']),
      output: { ...out, rejects },
      onRow: () => undefined,
    });
    await w.writeInvalid(row(0, ['']), { ok: false, error: 'needs an email', column: 'Email' });
    await w.write(row(1, ['b@x.co']), noRecords('failed', 'x'));
    await w.abort();
    expect(await readdir(join(out.target, '..'))).toEqual([]);
  });

  it('a rejects file that cannot be opened fails the open and leaves no output behind (the output opened first is undone)', async () => {
    const out = await output({});
    const rejects = join(out.target, '..', 'missing-dir', 'rejects.csv');
    await expect(
      openJoinWriter({
        kind: 'contacts',
        source: source(['Email']),
        output: { ...out, rejects },
        onRow: () => undefined,
      }),
    ).rejects.toMatchObject({ code: 'USAGE' });
    expect(await readdir(join(out.target, '..'))).toEqual([]);
  });
});
