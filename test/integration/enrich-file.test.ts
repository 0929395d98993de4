import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient, enrichFile } from '../../src/index.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

const sandbox = sandboxPerTest();

describe('enrichFile (the library call behind enrich contacts|companies)', () => {
  it('enriches a file with the defaults, and the same call resumes without paying twice', async () => {
    const s = await sandbox({ jobMs: 0 });
    const dir = await tempDir();
    const rows = contactRows(250, { dupEvery: 10, invalidEvery: 50 });
    const input = await writeCsv(dir, 'leads.csv', CONTACT_HEADER, rows);
    const output = join(dir, 'enriched.csv');
    const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
    const progress: string[] = [];
    try {
      const options = {
        kind: 'contacts' as const,
        input,
        output,
        service: { client, baseUrl: s.url },
        runsDir: join(dir, 'runs'),
        batchSize: 100,
        onProgress: (p: { phase: string }) => progress.push(p.phase),
      };
      const summary = await enrichFile(options);
      expect(summary.exitCode).toBe(0);
      expect(summary.statuses).toMatchObject({ enriched: 245, invalid: 5 });
      const out = parseCsv(await readFile(output, 'utf8'));
      expect(out).toHaveLength(251);
      expect(out.slice(1).map((r) => r.slice(0, 6))).toEqual(rows);
      expect(out[0]).toContain('enriched_email');
      expect(progress).toContain('writing');
      const charged = s.admin.stats().credits_charged;
      const first = await readFile(output, 'utf8');

      const again = await enrichFile(options);
      expect(again.resumed).toBe(true);
      expect(s.admin.stats().credits_charged).toBe(charged);
      expect(await readFile(output, 'utf8')).toBe(first);
    } finally {
      await client.close();
    }
  });

  it('two calls for the same job at once in one process: one runs, the other is refused', async () => {
    const s = await sandbox({ jobMs: 0 });
    const dir = await tempDir();
    const input = await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(50));
    const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
    const options = {
      kind: 'contacts' as const,
      input,
      output: join(dir, 'out.csv'),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
    };
    try {
      const [a, b] = await Promise.allSettled([enrichFile(options), enrichFile(options)]);
      const outcomes = [a, b].map((r) => r.status).sort();
      expect(outcomes).toEqual(['fulfilled', 'rejected']);
      const refused = [a, b].find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toMatchObject({ code: 'RUN_IN_PROGRESS' });
      expect(s.admin.stats().credits_charged).toBe(50);
      // Once the first is done, the same call resumes it.
      expect((await enrichFile(options)).resumed).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('companies: request options become the metadata, and bad ones are usage errors', async () => {
    const s = await sandbox({ jobMs: 0 });
    const dir = await tempDir();
    const input = await writeCsv(dir, 'co.csv', ['Company', 'Website'], [['Acme', 'acme.com']]);
    const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
    const base = {
      kind: 'companies' as const,
      input,
      output: join(dir, 'co-out.json'),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
    };
    try {
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
    } finally {
      await client.close();
    }
  });
});
