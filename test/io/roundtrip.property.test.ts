import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { createOutputWriter } from '../../src/io/write.js';
import { allRows } from './read-helpers.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-prop-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const nasty = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    '7',
    ' ',
    ',',
    ';',
    '\t',
    '|',
    '"',
    '\n',
    '\r',
    'é',
    '€',
    '😀',
    '=',
    "'",
    '#',
  ),
  maxLength: 8,
});
const tame = fc.string({
  unit: fc.constantFrom('a', 'b', 'Z', '7', ' ', '.', '@', 'é'),
  minLength: 1,
  maxLength: 8,
});

const table = (cell: fc.Arbitrary<string>) =>
  fc.integer({ min: 2, max: 5 }).chain((width) =>
    fc.record({
      header: fc.array(cell, { minLength: width, maxLength: width }),
      rows: fc.array(fc.array(cell, { minLength: width, maxLength: width }), { maxLength: 8 }),
    }),
  );

const dialect = fc.record({
  delimiter: fc.constantFrom(',', ';', '\t', '|'),
  eol: fc.constantFrom('\n', '\r\n', '\r'),
  encoding: fc.constantFrom('utf-8', 'utf-8-bom', 'utf-16le'),
});

async function writeInput(
  t: { header: string[]; rows: string[][] },
  d: { delimiter: string; eol: string; encoding: string },
) {
  const text = stringify([t.header, ...t.rows], {
    delimiter: d.delimiter,
    record_delimiter: d.eol,
    quoted_match: [/^\s*$|^\s|\s$/, /[\r\n]/],
  });
  const bytes =
    d.encoding === 'utf-16le'
      ? Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')])
      : Buffer.from((d.encoding === 'utf-8-bom' ? '\uFEFF' : '') + text);
  const file = join(dir, `in-${n++}.csv`);
  await writeFile(file, bytes);
  return file;
}

/** Reads a file, writes it back with status columns, reads the output: returns both tables. */
async function roundTrip(
  file: string,
  delimiter: string | undefined,
  outDelimiter: string,
  bom: boolean,
) {
  const source = await openInput(file, delimiter ? { delimiter } : {});
  const target = join(dir, `out-${n++}.csv`);
  const w = await createOutputWriter({
    target,
    format: 'csv',
    delimiter: outDelimiter,
    bom,
    inputHeader: source.rawHeader,
    jsonKeys: source.header,
    extraColumns: ['enriched_x'],
  });
  const rows = await allRows(source);
  for (const r of rows)
    await w.write({
      row: r.index + 1,
      input: r,
      status: 'enriched',
      error: '',
      creditCharged: false,
      values: ['=x'],
    });
  await w.close();
  const back = await openInput(target, { delimiter: outDelimiter });
  const backRows = await allRows(back);
  await Promise.all([source.close(), back.close(), rm(target), rm(file)]);
  const width = source.rawHeader.length;
  return {
    read: { header: source.rawHeader, rows: rows.map((r) => r.cells) },
    written: {
      header: back.rawHeader.slice(0, width),
      rows: backRows.map((r) => r.cells.slice(0, width)),
    },
    extras: backRows.map((r) => r.cells.slice(width)),
  };
}

describe('read -> write -> read keeps every cell (fast-check)', () => {
  it('any table, any delimiter, line end and encoding, with the delimiter given', async () => {
    await fc.assert(
      fc.asyncProperty(
        table(nasty),
        dialect,
        fc.constantFrom(',', '\t', ';'),
        fc.boolean(),
        async (t, d, outDelimiter, bom) => {
          const file = await writeInput(t, d);
          const { read, written, extras } = await roundTrip(file, d.delimiter, outDelimiter, bom);
          expect(read).toEqual(t);
          expect(written).toEqual(t);
          for (const e of extras) expect(e).toEqual(['enriched', '', 'false', '', "'=x"]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('plain tables round-trip with the delimiter detected', async () => {
    await fc.assert(
      fc.asyncProperty(table(tame), dialect, async (t, d) => {
        const file = await writeInput(t, d);
        const { read, written } = await roundTrip(file, undefined, ',', false);
        expect(read).toEqual(t);
        expect(written).toEqual(t);
      }),
      { numRuns: 60 },
    );
  });

  it('JSON output carries every input cell under the unique header names', async () => {
    await fc.assert(
      fc.asyncProperty(table(nasty), async (t) => {
        const file = await writeInput(t, { delimiter: ',', eol: '\n', encoding: 'utf-8' });
        const source = await openInput(file, { delimiter: ',' });
        const target = join(dir, `out-${n++}.json`);
        const w = await createOutputWriter({
          target,
          format: 'json',
          inputHeader: source.rawHeader,
          jsonKeys: source.header,
          extraColumns: [],
        });
        for await (const r of source.rows())
          await w.write({
            row: r.index + 1,
            input: r,
            status: 'invalid',
            error: 'x',
            creditCharged: null,
            values: [],
          });
        await w.close();
        const out = JSON.parse(await readFile(target, 'utf8')) as {
          input: Record<string, string>;
        }[];
        expect(out.map((o) => source.header.map((h) => o.input[h]))).toEqual(t.rows);
        await Promise.all([source.close(), rm(target), rm(file)]);
      }),
      { numRuns: 30 },
    );
  });
});
