import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, spawnCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

// `enrich contacts in.csv -o out.csv 2>&1 | head -1`: the reader of stderr leaves at its first
// line. stderr is talk: the run goes on and writes its output, and its exit code says how it
// went (regression: it died mid-run with exit 1, an internal error, leaving no output).
const CASES = SANDBOX_MODES.flatMap((mode) =>
  [
    { thread: 'main thread', worker: '0' },
    { thread: 'worker thread', worker: '1' },
  ].map((t) => ({ ...t, ...mode })),
);

describe.concurrent('a bulk run whose stderr reader goes away', () => {
  it.for(CASES)(
    '$thread, $name sandbox: finishes, writes every row and ends 0, each row paid once',
    async ({ worker, specOnly }, t) => {
      const sb = await sandboxForTest(t, { specOnly, jobMs: 300 });
      const env = {
        ...(await tempEnv()),
        ENRICH_BASE_URL: sb.url,
        ENRICH_API_KEY: sb.apiKey,
        ENRICH_WORKER: worker,
      };
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(3000));
      const output = join(dir, 'out.csv');
      const { child, code } = await spawnCli(
        ['contacts', file, '-o', output, '--batch-size', '500', '--concurrency', '1'],
        { env },
      );
      child.stderr.once('data', () => child.stderr.destroy());
      expect(await code).toBe(0);
      expect((await readFile(output, 'utf8')).trimEnd().split('\n')).toHaveLength(3001);
      expect(sb.admin.stats().credits_charged).toBe(3000);
    },
  );
});
