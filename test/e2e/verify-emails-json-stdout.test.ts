import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { sandboxForTest, tempDir, writeCsv } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * `--json` asks for the run's summary on stdout; without `-o` the verified rows go there. The
 * bulk commands refuse that (README, *Progress and flags*); `verify-emails` ignored the flag
 * without a word, so a script reading its JSON summary got CSV rows (and the run paid).
 */
describe('enrich verify-emails --json without -o', () => {
  it('is refused before anything is sent (exit 2); with -o the summary is on stdout', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
    const dir = await tempDir('enrich-verify-json-');
    const file = await writeCsv(dir, 'list.csv', ['Email'], [['ann@acme.com'], ['bob@acme.com']]);
    for (const args of [[], ['-o', '-']]) {
      const r = await runCli(['verify-emails', file, '--json', ...args], { env });
      expect(r.stderr).toMatch(/--json prints the run summary on stdout.*\[USAGE\]/);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
    }
    expect(s.admin.stats().verification_credits_charged).toBe(0);
    const ok = await runCli(['verify-emails', file, '--json', '-o', `${dir}/out.csv`], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ rows: 2, sent: 2 });
  });
});
