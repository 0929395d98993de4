import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSpool, spoolPath, writeSpool } from '../../src/pipeline/journal/spool.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-spool-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('spool', () => {
  const records = [{ first_name: 'Zoë', custom_fields: { enrich_row: 0 } }, { error: 'nope' }];

  it('reads back records written as an array', async () => {
    await writeSpool(dir, '3', records);
    expect(await readSpool(dir, '3', 'contacts')).toEqual(records);
    expect(await readSpool(dir, '3')).toEqual(records);
  });

  it('stores a response body as it came and reads its records under the kind', async () => {
    const body = JSON.stringify({ contacts: records, remaining_credits: 7 });
    await writeSpool(dir, '4.1', Buffer.from(body));
    expect(await readFile(spoolPath(dir, '4.1'), 'utf8')).toBe(body);
    expect(await readSpool(dir, '4.1', 'contacts')).toEqual(records);
  });

  it('refuses a spool without the records it should hold', async () => {
    await writeSpool(dir, '5', Buffer.from(JSON.stringify({ companies: records })));
    await expect(readSpool(dir, '5', 'contacts')).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(readSpool(dir, '5')).rejects.toThrow(/not an array/);
  });
});
