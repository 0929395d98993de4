import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { parseCsv, tempDir } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/**
 * README, *Output files*: enriching an enriched file again replaces the columns an earlier run
 * added. A companies output has `enriched_hq_address_1` and `_2` (record fields whose names end
 * in a number), which were taken for the user's own columns: every re-run of a companies output
 * stopped with exit 2 ("the input has columns named … which this run writes too").
 */
describe('enrich companies on its own output', () => {
  it.concurrent.for([[[]], [['--top', '2']]] as const)(
    'replaces the earlier enrichment columns (%j)',
    async ([extra]) => {
      const env = await tempEnv();
      const dir = await tempDir('enrich-reenrich-');
      const first = join(dir, 'first.csv');
      const second = join(dir, 'second.csv');
      const one = await runCli(
        ['companies', join(fixtures, 'companies.csv'), '-o', first, '--sandbox', '-q', ...extra],
        { env },
      );
      expect(one.code, one.stderr).toBe(0);
      const again = await runCli(['companies', first, '-o', second, '--sandbox', ...extra], {
        env,
      });
      expect(again.stderr).toMatch(
        /was enriched before: its \d+ enrich_\*\/enriched_\* columns are replaced/,
      );
      expect(again.code, again.stderr).toBe(0);
      const [h1] = parseCsv(await readFile(first, 'utf8'));
      const [h2, ...rows] = parseCsv(await readFile(second, 'utf8'));
      expect(h2).toEqual(h1);
      expect(rows.length).toBeGreaterThan(0);
    },
  );
});
