import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, spawnCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

// A --sandbox run's journal and embedded service end with it: interrupted, it has nothing to
// resume, and says so (regression: it said "the journal is saved. Resume with: …").
describe.concurrent('an interrupted --sandbox run', () => {
  it.for(['contacts', 'verify-emails'] as const)(
    '%s: exit 130, and the same command starts over',
    async (command) => {
      const dir = await tempDir();
      const rows =
        command === 'contacts'
          ? contactRows(20_000)
          : Array.from({ length: 20_000 }, (_, i) => [`person${i}@example.com`]);
      const file = await writeCsv(
        dir,
        'in.csv',
        command === 'contacts' ? CONTACT_HEADER : ['email'],
        rows,
      );
      const out = `${dir}/out.csv`;
      const {
        child,
        out: text,
        code,
      } = await spawnCli([command, file, '--sandbox', '-o', out], {
        env: await tempEnv(),
      });
      while (!/\d+ (rows|addresses)/.test(text.stderr) && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGINT');
      expect(await code).toBe(130);
      expect(text.stderr).toContain(
        `enrich: interrupted; a --sandbox run keeps no journal (its service ends with it). Start over with:\n  enrich ${command} ${file} --sandbox -o ${out}\n`,
      );
      expect(text.stderr).not.toContain('Resume with');
    },
  );
});
