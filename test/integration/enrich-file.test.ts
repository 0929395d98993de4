import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, enrichFile, type EnrichClient } from '../../src/index.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** A sandbox, the input file written in a temp dir, and the enrichFile options a call there needs. */
async function rig<K extends 'contacts' | 'companies'>(
  kind: K,
  file: { name: string; header: string[]; rows: string[][]; output: string },
) {
  const s = await sandbox({ jobMs: 0 });
  const dir = await tempDir();
  const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
  clients.push(client);
  const options = {
    kind,
    input: await writeCsv(dir, file.name, file.header, file.rows),
    output: join(dir, file.output),
    service: { client, baseUrl: s.url },
    runsDir: join(dir, 'runs'),
  };
  return { s, options };
}

describe('enrichFile (the library call behind enrich contacts|companies)', () => {
  it('enriches a file with the defaults, and the same call resumes without paying twice', async () => {
    const rows = contactRows(250, { dupEvery: 10, invalidEvery: 50 });
    const { s, options: base } = await rig('contacts', {
      name: 'leads.csv',
      header: CONTACT_HEADER,
      rows,
      output: 'enriched.csv',
    });
    const progress: string[] = [];
    const options = {
      ...base,
      batchSize: 100,
      onProgress: (p: { phase: string }) => progress.push(p.phase),
    };
    const summary = await enrichFile(options);
    expect(summary.exitCode).toBe(0);
    expect(summary.statuses).toMatchObject({ enriched: 245, invalid: 5 });
    const out = parseCsv(await readFile(options.output, 'utf8'));
    expect(out).toHaveLength(251);
    expect(out.slice(1).map((r) => r.slice(0, 6))).toEqual(rows);
    expect(out[0]).toContain('enriched_email');
    expect(progress).toContain('writing');
    const charged = s.admin.stats().credits_charged;
    const first = await readFile(options.output, 'utf8');

    const again = await enrichFile(options);
    expect(again.resumed).toBe(true);
    expect(s.admin.stats().credits_charged).toBe(charged);
    expect(await readFile(options.output, 'utf8')).toBe(first);
  });

  it('two calls for the same job at once in one process: one runs, the other is refused', async () => {
    const { s, options } = await rig('contacts', {
      name: 'leads.csv',
      header: CONTACT_HEADER,
      rows: contactRows(50),
      output: 'out.csv',
    });
    const [a, b] = await Promise.allSettled([enrichFile(options), enrichFile(options)]);
    const outcomes = [a, b].map((r) => r.status).sort();
    expect(outcomes).toEqual(['fulfilled', 'rejected']);
    const refused = [a, b].find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'RUN_IN_PROGRESS' });
    expect(s.admin.stats().credits_charged).toBe(50);
    // Once the first is done, the same call resumes it.
    expect((await enrichFile(options)).resumed).toBe(true);
  });

  it('companies: request options become the metadata, and bad ones are usage errors', async () => {
    const { options: base } = await rig('companies', {
      name: 'co.csv',
      header: ['Company', 'Website'],
      rows: [['Acme', 'acme.com']],
      output: 'co-out.json',
    });
    // JSON by the output's extension, as the CLI picks it.
    const summary = await enrichFile({ ...base, request: { top: 3 } });
    expect(summary.creditsCharged).toBe(3);
    const [row] = JSON.parse(await readFile(base.output, 'utf8')) as { records: unknown[] }[];
    expect(row?.records).toHaveLength(3);
    await expect(enrichFile({ ...base, output: '-', rejects: '-' })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/would be mixed into one stream/),
    });
    await expect(enrichFile({ ...base, request: { top: 11 } })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/top: expected an integer from 1 to 10/),
    });
    await expect(
      enrichFile({ ...base, kind: 'contacts', request: { requireMobile: true } }),
    ).rejects.toMatchObject({ code: 'USAGE' });
  });
});
