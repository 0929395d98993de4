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
  // Characters are code points, as the schemas count them: 200 emoji are 200 characters
  // (session 25: counted as 400 UTF-16 units, such a name was invalid and never sent).
  char: fc.constantFrom('x', 'é', '😀', '𠮷'),
});

function agrees(kind: BulkKind, fields: readonly string[]) {
  const mapping: ColumnMapping = { fields: Object.fromEntries(fields.map((f, i) => [f, i])) };
  const schema = kind === 'contacts' ? bulkContactSchema : bulkCompanySchema;
  return fc.property(
    fc.array(cell, { minLength: fields.length, maxLength: fields.length }),
    (cells) => {
      // An email cell long enough holds an address, a site cell a host name (their length
      // kept); a shorter one cannot.
      const site = (f: string) =>
        f === 'company_domain' || f === 'company_website' || f === 'prof_network_url';
      const text = (f: string, n: number, char: string) =>
        f === 'business_email' && n >= 7
          ? `${'x'.repeat(n - 6)}@ab.io`
          : site(f) && n >= 5
            ? `${'x'.repeat(n - 4)}.com`
            : site(f) || f === 'business_email'
              ? 'x'.repeat(n)
              : char.repeat(n);
      const raw = cells.map((c, i) => `${c.pad}${text(fields[i]!, c.length, c.char)}${c.pad}`);
      const sent: Record<string, string> = Object.fromEntries(
        fields.flatMap((f, i) =>
          cells[i]!.length > 0 ? [[f, text(f, cells[i]!.length, cells[i]!.char)]] : [],
        ),
      );
      // The email rule is ours (the wire takes any string): a bad address is left out, and
      // the row stands or falls by what remains.
      const email = sent.business_email;
      // (Over 255 characters the wire's own limit refuses the row first.)
      const notAnAddress = email !== undefined && (!email.includes('@') || email.length === 255);
      if (notAnAddress) delete sent.business_email;
      // So are sites that are no host name (`xx`): ours too.
      for (const f of Object.keys(sent)) if (site(f) && !sent[f]!.includes('.')) delete sent[f];
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
