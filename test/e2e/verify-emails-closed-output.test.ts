import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import {
  parseCsv,
  sandboxForTest,
  tempDir,
  writeCsv,
  type TestEnd,
} from '../integration/bulk-harness.js';

// Regression: `enrich verify-emails list.csv | head -2` verified (and paid for) every
// address of the file before it wrote a row, so the closed pipe was seen only at the end.
// Rows are now written as soon as the rows before them are settled: the reader going away
// stops the run after a handful of addresses, what was paid for is kept, and the same
// command with -o resumes without paying again.
beforeAll(ensureBuilt, 120_000);

const ADDRESSES = 2000;

/** A sandbox of the test's own (closed when it ends), fresh dirs, and the list to verify. */
async function setUp(t: TestEnd) {
  const s = await sandboxForTest(t, { port: 0, verificationCredits: 100_000 });
  const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
  const dir = await tempDir('enrich-verify-closed-');
  const rows = Array.from({ length: ADDRESSES }, (_, i) => [`${i}`, `lead${i}@firm${i % 13}.com`]);
  const file = await writeCsv(dir, 'list.csv', ['Id', 'Email'], rows);
  return { s, env, dir, file };
}

// The main-thread and worker-thread cases run side by side, each with its own sandbox, dirs
// and list.
describe('enrich verify-emails into a reader that goes away (e2e)', () => {
  it.concurrent.for([
    ['main thread', '0'],
    ['worker thread', '1'],
  ] as const)(
    '%s: stops after a handful of addresses with exit 2, and -o resumes without paying again',
    { timeout: 60_000 },
    async ([, worker], t) => {
      const { s, env, dir, file } = await setUp(t);
      const charged = () => s.admin.stats().verification_credits_charged;
      const { child, out, code } = await spawnCli(['verify-emails', file, '--no-progress'], {
        env: { ...env, ENRICH_WORKER: worker },
      });
      // `| head -2`: the reader takes the first lines written and leaves.
      child.stdout.once('data', () => child.stdout.destroy());
      const exited = await code;
      const paid = charged();
      expect(paid).toBeGreaterThan(0);
      expect(paid).toBeLessThan(ADDRESSES / 10);
      expect(exited).toBe(2);
      expect(out.stderr).toContain(
        `enrich: the output was closed before everything was written\nenrich: the answers it had are kept (the journal, the results cache): the same command writing to a file writes them without verifying them again:\n  enrich verify-emails ${file} --no-progress -o verified.csv\n`,
      );
      // The same command into a file: what was paid for is not sent again.
      const output = join(dir, 'out.csv');
      const resumed = await runCli(['verify-emails', file, '-o', output, '-q'], { env });
      expect(resumed.code).toBe(0);
      expect(charged()).toBe(ADDRESSES);
      const rows = parseCsv(await readFile(output, 'utf8')).slice(1);
      expect(rows).toHaveLength(ADDRESSES);
      expect(rows.every((r) => r[2] === 'enriched' && r[6] === 'valid')).toBe(true);
    },
  );
});
