/** Regression tests of the bugs the acceptance suite found (one per fix, see RELIABILITY.md). */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('regressions found by the acceptance suite', () => {
  it('a quiet run waiting on more than 10 jobs at once prints nothing (no MaxListenersExceededWarning)', async () => {
    const s = (sb = await startSandbox({ port: 0, jobMs: 200 }));
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(240));
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
    const r = await runCli(
      ['contacts', file, '-o', join(dir, 'out.csv'), '--batch-size', '10', '-q'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(s.admin.stats().jobs_submitted).toBe(24);
    expect(r.stderr).toBe('');
  });
});
