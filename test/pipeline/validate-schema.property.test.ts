import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bulkCompanySchema,
  bulkContactSchema,
  COMPANY_INPUT_FIELDS,
  CONTACT_INPUT_FIELDS,
} from '../../src/contract/index.js';
import type { ColumnMapping, BulkKind } from '../../src/pipeline/mapping/map-columns.js';
import { validateRow } from '../../src/pipeline/mapping/validate.js';

// validateRow checks the API rules by hand for speed; it must agree with the contract schemas.
const cell = fc.record({
  pad: fc.constantFrom('', ' ', '  \t'),
  length: fc.oneof(
    fc.constant(0),
    fc.constant(1),
    fc.integer({ min: 250, max: 260 }),
    fc.integer({ min: 2, max: 20 }),
  ),
});

function agrees(kind: BulkKind, fields: readonly string[]) {
  const mapping: ColumnMapping = { fields: Object.fromEntries(fields.map((f, i) => [f, i])) };
  const schema = kind === 'contacts' ? bulkContactSchema : bulkCompanySchema;
  return fc.property(
    fc.array(cell, { minLength: fields.length, maxLength: fields.length }),
    (cells) => {
      const raw = cells.map((c) => `${c.pad}${'x'.repeat(c.length)}${c.pad}`);
      const sent = Object.fromEntries(
        fields.flatMap((f, i) => (cells[i]!.length > 0 ? [[f, 'x'.repeat(cells[i]!.length)]] : [])),
      );
      const v = validateRow(kind, mapping, { index: 0, line: 2, cells: raw });
      expect(v.ok).toBe(schema.safeParse({ ...sent, custom_fields: {} }).success);
      if (v.ok) expect(v.fields).toEqual(sent);
    },
  );
}

describe('validateRow equals the contract schemas (fast-check)', () => {
  it('contacts', () => fc.assert(agrees('contacts', CONTACT_INPUT_FIELDS), { numRuns: 400 }));
  it('companies', () => fc.assert(agrees('companies', COMPANY_INPUT_FIELDS), { numRuns: 200 }));
});
