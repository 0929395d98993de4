import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import { writeContactsWorkbook } from './xlsx-fixture.js';

// Apart from read-xlsx.test.ts: 200 reads take seconds, and mutation testing of xlsx-zip.ts
// (scripts/mutate-targets.js) runs that file's tests once per mutant; a single read there
// covers the same code.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-xlsx-repeat-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

it('reads the second sheet of a small exceljs workbook every time (its workbook part comes last)', async () => {
  // exceljs's front-to-back reader lost the last parts at random: about 1 read in 100 failed
  // with "Cannot read properties of undefined (reading 'sheets')" (more under load).
  const path = join(dir, 'small.xlsx');
  await writeContactsWorkbook(path, 3, { notesFirst: true });
  for (let i = 0; i < 200; i++) {
    const source = await openInput(path, { sheet: 2 });
    try {
      const rows = [];
      for await (const r of source.rows()) rows.push(r.cells[1]);
      expect(rows).toEqual(['First0', 'First1', 'First2']);
    } finally {
      await source.close();
    }
  }
});
