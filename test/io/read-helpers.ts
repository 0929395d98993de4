import { join } from 'node:path';
import { openInput, type InputRow, type InputSource, type ReadOptions } from '../../src/io/read.js';

/** Path of a fixture under fixtures/inputs. */
export const fixture = (name: string) => join(import.meta.dirname, '../../fixtures/inputs', name);

/** Collects every row of a source. */
export async function allRows(source: InputSource): Promise<InputRow[]> {
  const rows: InputRow[] = [];
  for await (const r of source.rows()) rows.push(r);
  return rows;
}

/** Opens a fixture, reads header and rows, closes it. */
export async function readFixture(name: string, options?: ReadOptions) {
  const source = await openInput(fixture(name), options);
  try {
    return {
      source,
      header: source.header,
      rawHeader: source.rawHeader,
      rows: await allRows(source),
    };
  } finally {
    await source.close();
  }
}
