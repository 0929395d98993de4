import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { renderResults } from '../../../../src/cli/commands/jobs/fetch.js';

describe('jobs fetch as CSV', () => {
  it('says what each record answers: original_fields as original_<field> columns, object or JSON text', () => {
    const records = [
      {
        error: '',
        credit_charged: true,
        email: 'a@x.io',
        original_fields: { business_email: 'a@x.io' },
      },
      // The spec allows the echo as the JSON text of an object.
      {
        error: '',
        credit_charged: true,
        email: 'b@y.io',
        original_fields: '{"business_email":"b@y.io"}',
      },
    ];
    const rows = parse(renderResults('contacts', 'job-1', records, 5, 'csv')) as string[][];
    const at = rows[0]?.indexOf('original_business_email') as number;
    expect(at).toBeGreaterThan(0);
    expect(rows.slice(1).map((r) => r[at])).toEqual(['a@x.io', 'b@y.io']);
  });
});
