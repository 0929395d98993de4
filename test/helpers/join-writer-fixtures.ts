// What the join writer's tests give it: a source with a header, input rows, an output in a
// temporary directory, company records, and the output read back.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { InputRow, InputSource } from '../../src/io/read.js';
import type { JoinOutput } from '../../src/pipeline/types.js';

export const source = (header: string[]) =>
  ({ rawHeader: header, header }) as unknown as InputSource;

export const row = (index: number, cells: string[]): InputRow => ({
  index,
  line: index + 2,
  cells,
});

/** An output of `format` (csv unless given) in a new temporary directory. */
export const output = async (o: Partial<JoinOutput>): Promise<JoinOutput> => ({
  target: join(await mkdtemp(join(tmpdir(), 'enrich-join-writer-')), `out.${o.format ?? 'csv'}`),
  format: 'csv',
  bom: false,
  formulaEscape: 'auto',
  explode: false,
  prefix: 'enriched_',
  ...o,
});

export const company = (name: string) => ({
  error: '',
  credit_charged: true,
  name,
  website: `${name}.com`,
});

export const csvOf = async (path: string) => parse(await readFile(path, 'utf8')) as string[][];
