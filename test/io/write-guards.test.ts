import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { BLOCK_CELLS } from '../../src/io/write-sinks.js';
import {
  createOutputWriter,
  type OutputRow,
  type OutputWriterOptions,
} from '../../src/io/write.js';
import { rootTest } from '../helpers/root.js';

// The output writer's guards (issue 21: mutants of write.ts and write-sinks.ts that no test
// saw). Each names what a user would have found in the file.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-write-guards-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const input = (cells: string[], index = 0): InputRow => ({ index, line: index + 2, cells });
const rowOf = (i: number, over: Partial<OutputRow> = {}): OutputRow => ({
  row: i + 1,
  input: input([`p${i}@acme.com`, `Name ${i} ${'x'.repeat(60)}`], i),
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [`+1 415 555 ${String(i).padStart(4, '0')}`],
  record: { phone: `+1 415 555 ${String(i).padStart(4, '0')}` },
  ...over,
});
const options = (o: Partial<OutputWriterOptions>): OutputWriterOptions => ({
  target: join(dir, `out.${o.format ?? 'csv'}`),
  format: 'csv',
  inputHeader: ['Email', 'Name'],
  jsonKeys: ['Email', 'Name'],
  extraColumns: ['enriched_phone'],
  ...o,
});
async function writeRows(o: Partial<OutputWriterOptions>, rows: OutputRow[]): Promise<string> {
  const opts = options(o);
  const w = await createOutputWriter(opts);
  for (const r of rows) await w.write(r);
  await w.close();
  return readFile(opts.target, 'utf8');
}
const many = (n: number) => Array.from({ length: n }, (_, i) => rowOf(i));

describe('the output writer', () => {
  it('--bom writes one BOM at the very start of a CSV of several blocks, not one per block', async () => {
    const n = Math.ceil((2.5 * BLOCK_CELLS) / 7); // 7 cells a row: 2 input, 4 status, 1 enriched
    const text = await writeRows({ bom: true }, many(n));
    expect(text.startsWith('\uFEFFEmail,Name,enrich_status')).toBe(true);
    expect(text.split('\uFEFF').length - 1).toBe(1);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(n + 1);
    expect(lines[1]!.split(',')).toHaveLength(7);
    expect(lines[n]).toContain(`p${n - 1}@acme.com`);
  });

  it('without --bom a CSV has no BOM', async () => {
    expect((await writeRows({}, many(3))).includes('\uFEFF')).toBe(false);
  });

  it.each(['json', 'jsonl'] as const)(
    '%s output well past 64 KiB: every row once, in order, the file parses',
    async (format) => {
      const rows = many(2500);
      const text = await writeRows({ format }, rows);
      expect(text.length).toBeGreaterThan(4 * 65_536);
      const parsed = (
        format === 'json'
          ? JSON.parse(text)
          : text
              .trimEnd()
              .split('\n')
              .map((l) => JSON.parse(l) as unknown)
      ) as { row: number; input: { Email: string }; record: { phone: string } }[];
      expect(parsed.map((r) => r.row)).toEqual(rows.map((r) => r.row));
      expect(parsed[2499]?.input.Email).toBe('p2499@acme.com');
      expect(parsed[1234]?.record.phone).toBe('+1 415 555 1234');
    },
  );

  it.each(['json', 'jsonl'] as const)('%s output of no rows is valid', async (format) => {
    const text = await writeRows({ format }, []);
    expect(text).toBe(format === 'json' ? '[]\n' : '');
  });

  it("a service's error text is formula-escaped in CSV; a local validation message is not", async () => {
    const rows = [
      rowOf(0, { status: 'failed', error: '=HYPERLINK("http://evil","x")', values: [null] }),
      rowOf(1, { status: 'invalid', error: '-not an email-', values: [null] }),
    ];
    const csv = await writeRows({}, rows);
    expect(csv).toContain(`failed,"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csv).toContain('invalid,-not an email-,');
    const raw = await writeRows({ formulaEscape: 'never' }, rows);
    expect(raw).toContain(`failed,"=HYPERLINK(""http://evil"",""x"")"`);
  });

  it('writes credit_charged as true, false, unknown or empty, and the cache time', async () => {
    const csv = await writeRows({}, [
      rowOf(0, { creditCharged: true, cachedAt: '2026-11-01T00:00:00Z' }),
      rowOf(1, { creditCharged: false }),
      rowOf(2, { creditCharged: 'unknown' }),
      rowOf(3, { creditCharged: null, status: 'invalid', values: [] }),
    ]);
    const cells = csv
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',').slice(2, 6));
    expect(cells).toEqual([
      ['enriched', '', 'true', '2026-11-01T00:00:00Z'],
      ['enriched', '', 'false', ''],
      ['enriched', '', 'unknown', ''],
      ['invalid', '', '', ''],
    ]);
  });

  it('an output stream that errors makes the write, or the close, fail: never a silent success', async () => {
    const broken = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const w = await createOutputWriter(options({ target: '-', stdout: broken }));
    let failed: unknown;
    try {
      for (const r of many(600)) await w.write(r);
      await w.close();
    } catch (err) {
      failed = err;
    }
    expect(failed).toMatchObject({ name: 'EnrichError' });
  });

  it('writes to stdout (a stream) without ending it, all rows there', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const w = await createOutputWriter(options({ target: '-', stdout: out, format: 'jsonl' }));
    for (const r of many(3)) await w.write(r);
    await w.close();
    expect(out.writableEnded).toBe(false);
    expect(Buffer.concat(chunks).toString('utf8').trimEnd().split('\n')).toHaveLength(3);
  });
});

describe('the CSV writer quotes what would split a row', () => {
  it('a lone CR or LF inside a value from the service is quoted, so the row stays one row', async () => {
    const csv = await writeRows({}, [
      rowOf(0, { values: ['a\rb'] }),
      rowOf(1, { values: ['c\nd'] }),
    ]);
    expect(csv).toContain('"a\rb"');
    expect(csv).toContain('"c\nd"');
  });
});

describe('the output file itself', () => {
  it('a .gz output is gzip of exactly the text', async () => {
    const { gunzipSync } = await import('node:zlib');
    const target = join(dir, 'out.csv.gz');
    const w = await createOutputWriter(options({ target }));
    for (const r of many(3)) await w.write(r);
    await w.close();
    const text = gunzipSync(await readFile(target)).toString('utf8');
    expect(text.trimEnd().split('\n')).toHaveLength(4);
    expect(text).toContain('p2@acme.com');
    // gzip: false writes plain text even under a .gz name.
    const plain = join(dir, 'plain.csv.gz');
    const p = await createOutputWriter(options({ target: plain, gzip: false }));
    await p.write(rowOf(0));
    await p.close();
    expect((await readFile(plain, 'utf8')).startsWith('Email,Name')).toBe(true);
  });

  rootTest('(root: chown) an existing output keeps its owner and mode', async () => {
    const { chown, chmod, stat, writeFile } = await import('node:fs/promises');
    const target = join(dir, 'owned.csv');
    await writeFile(target, 'old');
    await chown(target, 1234, 2345);
    await chmod(target, 0o640);
    await writeRows({ target }, many(1));
    const st = await stat(target);
    expect([st.uid, st.gid, st.mode & 0o777]).toEqual([1234, 2345, 0o640]);
  });
});
