import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONTACT_HEADER,
  contactRows,
  runFile,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

/** The one run journal under `runsDir`. */
async function journalOf(runsDir: string): Promise<string> {
  const entries = await readdir(runsDir, { withFileTypes: true });
  const runs = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  expect(runs).toHaveLength(1);
  return join(runsDir, runs[0] as string, 'journal.jsonl');
}

describe('a run journal damaged before its end', () => {
  // Session 25: a line in the middle that did not parse was taken for a crash's torn tail,
  // and the resume cut every event after it, accepted jobs too: their rows were paid again.
  it.concurrent.for(SANDBOX_MODES)(
    'is refused (JOURNAL_DAMAGED, nothing sent), never cut: no job is paid twice ($name)',
    async ({ specOnly }, t) => {
      const s = await sandboxForTest(t, { specOnly, jobMs: 60_000 });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(150));
      const first = await runFile(s, file, { runsDir: dir, wait: false });
      expect(first.summary.jobs.ids).toHaveLength(2);
      const path = await journalOf(dir);
      const lines = (await readFile(path, 'utf8')).split('\n');
      // A line before the accepted jobs loses a byte (a disk error, an editor).
      const at = lines.findIndex((l) => l.startsWith('{"t":"submit"'));
      lines[at] = (lines[at] as string).slice(1);
      const damaged = lines.join('\n');
      await writeFile(path, damaged);
      await expect(runFile(s, file, { runsDir: dir, wait: false })).rejects.toMatchObject({
        code: 'JOURNAL_DAMAGED',
        exitCode: 2,
        message: expect.stringContaining(`line ${at + 1} is not a journal event`),
      });
      expect(s.admin.stats().jobs_submitted).toBe(2);
      expect(await readFile(path, 'utf8')).toBe(damaged); // kept whole, to be mended
    },
  );
});
