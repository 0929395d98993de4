import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-gz-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('gzip input', () => {
  it.each([
    ['leads.csv.gz', 'email,name\njane@acme.com,Jane\n', 'csv'],
    ['leads.tsv.gz', 'email\tname\njane@acme.com\tJane\n', 'tsv'],
    ['leads.jsonl.gz', '{"email":"jane@acme.com","name":"Jane"}\n', 'jsonl'],
    ['leads.json.gz', '[{"email":"jane@acme.com","name":"Jane"}]', 'json'],
  ])('%s is read as %s (never taken for a workbook)', async (name, text, format) => {
    const path = join(dir, name);
    await writeFile(path, gzipSync(text));
    const source = await openInput(path);
    try {
      expect(source.format).toBe(format);
      expect(source.header).toEqual(['email', 'name']);
      const rows = [];
      for await (const r of source.rows()) rows.push(r.cells);
      expect(rows).toEqual([['jane@acme.com', 'Jane']]);
      // The run's identity is the file's own path; the file id refuses it as the output.
      expect((await source.identity()).path).toContain(name);
      expect(source.file?.realPath).toContain(name);
    } finally {
      await source.close();
    }
  });

  it('a truncated gzip file is a clear error', async () => {
    const path = join(dir, 'cut.csv.gz');
    await writeFile(path, gzipSync('email\njane@acme.com\n'.repeat(100)).subarray(0, 20));
    await expect(openInput(path)).rejects.toThrow(/cut.csv.gz: it is not a whole gzip file/);
  });
});
