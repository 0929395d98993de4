import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, enrichFile, type EnrichClient } from '../../src/index.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  runFile,
  SANDBOX_MODES,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const col = (rows: string[][], name: string) => {
  const i = (rows[0] as string[]).indexOf(name);
  expect(i).toBeGreaterThanOrEqual(0);
  return rows.slice(1).map((r) => r[i] as string);
};

/** 12 contacts: rows 1 and 7 have no work email (sandbox magic), rows 4 and 10 no mobile phone. */
function rowsWithGaps(): string[][] {
  return contactRows(12).map((r, i) =>
    i % 6 === 1
      ? [r[0]!, 'Noemail', ...r.slice(2)]
      : i % 6 === 4
        ? [r[0]!, r[1]!, 'Nomobile', ...r.slice(3)]
        : r,
  );
}

/**
 * api-spec 4.1: with `business_email_exists` "only contacts having a work email are returned"
 * (`mobile_phone_exists` likewise). Regression: the contacts the service left out were
 * reported `missing`, "may have been charged", as if the answer had lost them.
 */
describe('--require-email / --require-mobile: contacts the service leaves out', () => {
  it.each(SANDBOX_MODES)(
    'are not_found, saying why, and not charged ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rowsWithGaps());
      const { summary, output } = await runFile(s, file, {
        runsDir: dir,
        request: { requireEmail: true },
      });
      expect(s.admin.stats().credits_charged).toBe(10);
      expect(summary.creditsCharged).toBe(10);
      expect(summary.statuses).toMatchObject({ enriched: 10, not_found: 2, missing: 0 });
      expect(summary.chargeUnknownRows).toBe(0);
      expect(summary.exitCode).toBe(0);
      const out = parseCsv(output);
      const status = col(out, 'enrich_status');
      const error = col(out, 'enrich_error');
      const charged = col(out, 'enrich_credit_charged');
      for (const i of [1, 7]) {
        expect(status[i]).toBe('not_found');
        expect(error[i]).toBe(
          'not returned: the service returns only contacts with a work email (--require-email)',
        );
        expect(charged[i]).toBe('false');
      }
      expect(status.filter((x) => x === 'enriched')).toHaveLength(10);
    },
  );

  it.each(SANDBOX_MODES)(
    'with both filters, each left-out contact names both ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rowsWithGaps());
      const { summary, output } = await runFile(s, file, {
        runsDir: dir,
        request: { requireEmail: true, mobile: true, requireMobile: true },
      });
      expect(summary.statuses).toMatchObject({ enriched: 8, not_found: 4, missing: 0 });
      expect(summary.chargeUnknownRows).toBe(0);
      const out = parseCsv(output);
      const error = col(out, 'enrich_error');
      for (const i of [1, 4, 7, 10])
        expect(error[i]).toBe(
          'not returned: the service returns only contacts with a work email (--require-email) and a mobile phone (--require-mobile)',
        );
      expect(col(out, 'enriched_mobile_phone').filter((m) => m !== '')).toHaveLength(8);
    },
  );

  it.each(SANDBOX_MODES)(
    'are not kept in the results cache: another file asks for them again, at no charge ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly, jobMs: 0 });
      const dir = await tempDir();
      const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
      clients.push(client);
      const run = (input: string, output: string) =>
        enrichFile({
          kind: 'contacts',
          input,
          output: join(dir, output),
          service: { client, baseUrl: s.url },
          runsDir: join(dir, 'runs'),
          cacheDir: join(dir, 'cache'),
          request: { requireEmail: true },
        });
      const rows = rowsWithGaps();
      const first = await run(await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows), 'a-out.csv');
      expect(first.statuses).toMatchObject({ enriched: 10, not_found: 2 });
      const sent = s.admin.stats().records_submitted;
      // The same rows in another file (another run): the enriched ones come from the cache.
      const second = await run(
        await writeCsv(dir, 'b.csv', CONTACT_HEADER, [...rows].reverse()),
        'b-out.csv',
      );
      expect(second.cacheHits).toBe(10);
      expect(second.statuses).toMatchObject({ enriched: 10, not_found: 2, missing: 0 });
      expect(s.admin.stats().records_submitted - sent).toBe(2);
      expect(s.admin.stats().credits_charged).toBe(10);
      const out = parseCsv(await readFile(join(dir, 'b-out.csv'), 'utf8'));
      // The library names its own option, never a flag.
      expect(col(out, 'enrich_error').filter((e) => e !== '')).toEqual([
        'not returned: the service returns only contacts with a work email (requireEmail)',
        'not returned: the service returns only contacts with a work email (requireEmail)',
      ]);
    },
  );
});
