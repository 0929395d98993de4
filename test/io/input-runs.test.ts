import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsv, runFile, sandboxPerTest, tempDir } from '../integration/bulk-harness.js';

// Exporter quirks taken through a whole bulk run against a sandbox on 127.0.0.1, port 0.
const sandbox = sandboxPerTest();

describe('a trailing delimiter on every data row (a,b,c,d over 1,2,3,4,)', () => {
  it('enriches the rows, written back with the header width', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = join(dir, 'trailing.csv');
    await writeFile(
      file,
      'Email,First Name,Last Name,Company\r\n' +
        'jo@acme.com,Jo,Doe,Acme,\r\n' +
        'al@acme.com,Al,Bo,Acme,\r\n' +
        'mia@acme.com,Mia,Ray,Acme,left over\r\n',
    );
    const { summary, output } = await runFile(s, file, { runsDir: dir });
    const out = parseCsv(output);
    expect(out.slice(1).map((r) => r.slice(0, 6))).toEqual([
      ['jo@acme.com', 'Jo', 'Doe', 'Acme', 'enriched', ''],
      ['al@acme.com', 'Al', 'Bo', 'Acme', 'enriched', ''],
      [
        'mia@acme.com',
        'Mia',
        'Ray',
        'Acme',
        'invalid',
        'expected 4 cells, got 5 (extra: "left over")',
      ],
    ]);
    expect(summary.statuses).toMatchObject({ enriched: 2, invalid: 1 });
    expect(s.admin.stats().records_submitted).toBe(2);
  });
});
