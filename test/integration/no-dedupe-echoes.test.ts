import { describe, expect, it } from 'vitest';
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

const col = (rows: string[][], name: string) => {
  const i = (rows[0] as string[]).indexOf(name);
  expect(i).toBeGreaterThanOrEqual(0);
  return rows.slice(1).map((r) => r[i] as string);
};

/**
 * `custom_fields` is optional in bulk results and no order is promised (api-spec 2.1, 2.2):
 * a record that lost it is joined by its `original_fields` echo. Regression: with
 * `--no-dedupe` that fallback was off for every row, so every record the service returned
 * (and charged) without it was thrown away and its row reported `missing`.
 */
describe('--no-dedupe, results without custom_fields', () => {
  it.each(SANDBOX_MODES)(
    'every paid contact record reaches a row, one per row, repeated requests too ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({
        specOnly,
        faults: { drop_custom_fields: true, shuffle_results: true },
      });
      const dir = await tempDir();
      // Every third row repeats the one before it, in the same batch: sent twice.
      const rows = contactRows(24, { dupEvery: 3 });
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
      const { summary, output } = await runFile(s, file, {
        runsDir: dir,
        dedupe: false,
        batchSize: 12,
      });
      expect(s.admin.stats().credits_charged).toBe(24);
      expect(summary.creditsCharged).toBe(24);
      expect(summary.statuses).toMatchObject({ enriched: 24, missing: 0 });
      expect(summary.chargeUnknownRows).toBe(0);
      expect(summary.exitCode).toBe(0);
      const out = parseCsv(output);
      expect(col(out, 'enriched_email')).toEqual(rows.map((r) => r[3]));
      expect(col(out, 'enrich_credit_charged')).toEqual(rows.map(() => 'true'));
    },
  );

  it.each(SANDBOX_MODES)(
    'companies with --top 3: each row keeps three matches, repeated requests too ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({
        specOnly,
        faults: { drop_custom_fields: true, shuffle_results: true },
      });
      const dir = await tempDir();
      const sites = ['acme.com', 'globex.com', 'acme.com', 'initech.com', 'globex.com', 'acme.com'];
      const file = await writeCsv(
        dir,
        'co.csv',
        ['Company', 'Website'],
        sites.map((w) => ['', w]),
      );
      const { summary, output } = await runFile(s, file, {
        kind: 'companies',
        runsDir: dir,
        dedupe: false,
        metadata: { top_matches_returned: 3 },
      });
      expect(s.admin.stats().credits_charged).toBe(18);
      expect(summary.creditsCharged).toBe(18);
      expect(summary.statuses).toMatchObject({ enriched: 6, missing: 0 });
      const out = parseCsv(output);
      const names = ['enriched_name', 'enriched_name_2', 'enriched_name_3'].map((c) => col(out, c));
      expect(col(out, 'enrich_error')).toEqual(sites.map(() => ''));
      sites.forEach((site, i) => {
        const got = names.map((n) => n[i]);
        expect(got.every((n) => n !== '')).toBe(true);
        // Three distinct matches, as a clean run gives this company (none taken twice).
        expect(new Set(got).size).toBe(3);
        const same = sites.indexOf(site);
        expect(new Set(got)).toEqual(new Set(names.map((n) => n[same])));
      });
    },
  );
});
