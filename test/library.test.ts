import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as enrich from '../src/index.js';
import { tempDir } from './integration/bulk-harness.js';

describe('the library entry', () => {
  it('runs a bulk enrichment end to end with only its public exports', async () => {
    const sb = await enrich.startSandbox({ credits: 10 });
    const client = enrich.createClient({ baseUrl: sb.url, apiKey: sb.apiKey });
    const dir = await tempDir('enrich-lib-');
    const file = join(dir, 'in.csv');
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(file, 'Email,Name\njane@acme.com,Jane Doe\n,\n'),
    );
    const source = await enrich.openInput(file);
    try {
      const run = await enrich.resolveRun(
        {
          kind: 'contacts',
          batchSize: 100,
          concurrency: 2,
          timeoutMs: 60_000,
          runsDir: enrich.runsDirOf(dir),
          command: 'library test',
          output: join(dir, 'out.json'),
        },
        source,
      );
      const summary = await enrich.runBulk(run, {
        baseUrl: sb.url,
        api: enrich.toBulkApi(client),
        env: { now: Date.now, sleep: async () => {}, random: Math.random },
      });
      expect(summary.statuses).toMatchObject({ enriched: 1, invalid: 1 });
      const out = JSON.parse(await readFile(join(dir, 'out.json'), 'utf8')) as { status: string }[];
      expect(out.map((o) => o.status)).toEqual(['enriched', 'invalid']);
      expect(sb.admin.stats().credits_charged).toBe(1);
    } finally {
      await source.close();
      await client.close();
      await sb.close();
    }
  });

  it('exports the contract and the error family', () => {
    expect(enrich.contactRequestSchema.safeParse({ business_email: 'a@b.co' }).success).toBe(true);
    expect(new enrich.EnrichError('USAGE', 'x').exitCode).toBe(2);
    expect(enrich.parseDuration('2h')).toBe(7_200_000);
  });
});
