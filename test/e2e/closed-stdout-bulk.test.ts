import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

describe.concurrent.for(SANDBOX_MODES)(
  'a bulk run whose stdout reader goes away ($name sandbox)',
  ({ specOnly }) => {
    it('says how many jobs it had sent, and the command that writes them to a file; that command pays nothing more', async (t) => {
      // Jobs of 1 s: every POST is answered before the first results, so none is on its way at the stop.
      const sb = await sandboxForTest(t, { specOnly, jobMs: 1000 });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(3000));
      // `enrich contacts in.csv | head -1`: the reader leaves at the first bytes.
      const { child, out, code } = await spawnCli(['contacts', file, '--quiet'], { env });
      child.stdout.once('data', () => child.stdout.destroy());
      expect(await code).toBe(2);
      const sent = sb.admin.stats().jobs_submitted;
      expect(sent).toBeGreaterThan(0);
      const jobs = sent === 1 ? '1 job' : `${sent} jobs`;
      expect(out.stderr).toContain(
        `enrich: the output was closed before everything was written\nenrich: the service had accepted ${jobs} of this run (their rows may be charged); the journal keeps them: the same command writing to a file downloads their answers without sending them again:\n  enrich contacts ${file} --quiet -o enriched.csv\n`,
      );
      const charged = sb.admin.stats().credits_charged;

      const output = join(dir, 'enriched.csv');
      const again = await runCli(['contacts', file, '--quiet', '-o', output], { env });
      expect(again.code).toBe(0);
      expect((await readFile(output, 'utf8')).trimEnd().split('\n')).toHaveLength(3001);
      // The jobs sent before are downloaded, not sent again; only the rows never sent are paid.
      const stats = sb.admin.stats();
      expect(stats.records_submitted).toBe(3000);
      expect(stats.credits_charged).toBe(3000);
      expect(charged).toBeLessThanOrEqual(3000);
    });
  },
);

describe('a bulk run into stdout with --sandbox', () => {
  it('says no command to run again when its reader goes away: its journal and service end with it', async () => {
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(3000));
    const { child, out, code } = await spawnCli(['contacts', file, '--sandbox', '--quiet'], {
      env: await tempEnv(),
    });
    child.stdout.once('data', () => child.stdout.destroy());
    expect(await code).toBe(2);
    expect(out.stderr).toContain('enrich: the output was closed before everything was written\n');
    expect(out.stderr).not.toContain('the same command writing to a file');
  });
});
