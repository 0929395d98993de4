import { describe, expect, it } from 'vitest';
import { formatMappingTable, printable } from '../../../../src/cli/commands/bulk/dry-run.js';
import type { InputSource } from '../../../../src/io/read.js';
import type { Plan } from '../../../../src/pipeline/run/plan.js';

describe('the --dry-run mapping table', () => {
  it('shows line breaks, tabs and terminal escapes in cells as escapes', () => {
    expect(printable('a\nb\r\nc\td')).toBe('a\\nb\\r\\nc\\td');
    expect(printable('\u001b[31mred\u001b[0m')).toBe('\\u001b[31mred\\u001b[0m');
    expect(printable('José, Inc. 王')).toBe('José, Inc. 王');
  });

  it('keeps one line per field whatever the cells hold', () => {
    const source = {
      name: 'in.csv',
      format: 'csv',
      header: ['Email', 'Notes\nmore'],
      dialect: { delimiter: ',', encoding: 'utf-8', bom: false, headerLine: 1, sepLine: false },
    } as unknown as InputSource;
    const plan = {
      mapping: { fields: { business_email: 0 } },
      names: { business_email: 'Email' },
      samples: { business_email: ['a@x.io\n\u001b[2J', 'b@y.io'] },
    } as unknown as Plan;
    const lines = formatMappingTable(plan, source).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('  business_email  Email   a@x.io\\n\\u001b[2J | b@y.io');
    expect(lines[3]).toBe('  not sent: "Notes\\nmore"');
  });
});
