import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/io/csv-line.js';

// What the writer used before: csv-stringify per row, quoting lone CR/LF too.
const reference = (cells: string[], delimiter: string) =>
  stringify([cells], { delimiter, record_delimiter: '\n', quoted_match: /[\r\n]/ });

describe('csvLine', () => {
  it('writes what csv-stringify writes, for any cells and delimiter', () => {
    const cell = fc.oneof(
      fc.string(),
      fc.string({
        unit: fc.constantFrom('a', ',', ';', '\t', '|', '"', '\n', '\r', ' ', 'é', '='),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(cell, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(',', ';', '\t', '|'),
        (cells, delimiter) => {
          expect(csvLine(cells, delimiter)).toBe(reference(cells, delimiter));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('quotes only cells that need it and doubles quotes', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', '', 'x\ny'], ',')).toBe(
      'a,"b,c","say ""hi""",,"x\ny"\n',
    );
    expect(csvCell('a,b', ';')).toBe('a,b');
    expect(csvCell('a;b', ';')).toBe('"a;b"');
    expect(csvCell('lone\r', '\t')).toBe('"lone\r"');
  });
});
