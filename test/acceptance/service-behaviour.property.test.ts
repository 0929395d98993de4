import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type EnrichClient } from '../../src/api/client.js';
import { sandboxHonoursKeys } from '../api/harness.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import type { Faults } from '../../src/sandbox/types.js';
import {
  CONTACT_HEADER,
  parseCsv,
  runFile,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { recordFigure } from './figures.js';

let clean: SandboxHandle;
let faulty: SandboxHandle;
let faultyClient: EnrichClient;
let dir: string;
beforeAll(async () => {
  clean = await startSandbox({ port: 0 });
  faulty = await startSandbox({ port: 0 });
  // Up to 10% resets and 10% truncations per attempt: with the default 5 attempts one
  // request in 10^4 or so fails for good, and a property run makes hundreds of them (a
  // failed batch is correct behaviour, but not the one compared here). 12 attempts make
  // that about 10^-9; the retry rules themselves are tested in test/api/.
  faultyClient = createClient({
    baseUrl: faulty.url,
    apiKey: faulty.apiKey,
    sleep: async () => {},
    random: () => 0.5,
    retry: { maxAttempts: 12 },
    idempotencyStore: sandboxHonoursKeys(),
  });
  dir = await tempDir('enrich-prop-');
});
afterAll(async () => {
  await faultyClient.close();
  await clean.close();
  await faulty.close();
});

/** A random contact table: valid rows, duplicates of earlier rows, invalid rows, odd cells. */
const table = fc
  .array(
    fc.record({
      kind: fc.constantFrom('valid', 'valid', 'valid', 'duplicate', 'invalid', 'nomatch'),
      person: fc.nat({ max: 40 }),
      note: fc.string({ maxLength: 12 }),
    }),
    { minLength: 1, maxLength: 60 },
  )
  .map((specs) =>
    specs.map((s, i) => {
      const id = `R${i}`;
      if (s.kind === 'invalid') return [id, 'Only', '', '', '', s.note];
      const p = s.kind === 'duplicate' ? s.person % Math.max(1, i) : s.person + i * 41;
      const local = s.kind === 'nomatch' ? `nomatch${p}` : `p${p}`;
      return [id, `F${p}`, `L${p}`, `${local}@co${p % 9}.com`, `Co ${p % 9}`, s.note];
    }),
  );

/** Random service behaviour through the sandbox's own faults. */
const faults: fc.Arbitrary<Faults> = fc.record({
  rates: fc.record({
    '500': fc.double({ min: 0, max: 0.2, noNaN: true }),
    '429': fc.double({ min: 0, max: 0.2, noNaN: true }),
    '503': fc.double({ min: 0, max: 0.1, noNaN: true }),
  }),
  reset_rate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  reset_after_rate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  truncate_rate: fc.double({ min: 0, max: 0.1, noNaN: true }),
  retry_after: fc.constantFrom('seconds', 'http-date'),
  shuffle_results: fc.boolean(),
  drop_custom_fields: fc.oneof(fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true })),
  // fast-check draws doubles near 0 often: fixed rates make dropped records really happen.
  drop_records: fc.constantFrom(0, 0, 0.1, 0.25, 0.5),
}) as fc.Arbitrary<Faults>;

describe('random tables x random service behaviour (fast-check, acceptance)', () => {
  it('the join never loses, duplicates or misattributes a row, and never pays twice', async () => {
    let runs = 0;
    let requests = 0;
    let missing = 0;
    await fc.assert(
      fc.asyncProperty(
        table,
        faults,
        fc.integer({ min: 1, max: 25 }),
        async (rows, f, batchSize) => {
          const n = runs++;
          const file = await writeCsv(dir, `in-${n}.csv`, CONTACT_HEADER, rows);
          const a = await runFile(clean, file, { runsDir: `${dir}/c${n}`, batchSize });
          const before = faulty.admin.stats();
          faulty.admin.setFaults(f);
          const b = await runFile(faulty, file, {
            runsDir: `${dir}/f${n}`,
            batchSize,
            client: faultyClient,
          });
          faulty.admin.setFaults({});
          const after = faulty.admin.stats();
          requests +=
            Object.values(after.requests_by_status).reduce((x, y) => x + y, 0) -
            Object.values(before.requests_by_status).reduce((x, y) => x + y, 0);

          const want = parseCsv(a.output);
          const got = parseCsv(b.output);
          // Never loses or duplicates: one output row per input row, in order, cells intact.
          expect(got).toHaveLength(rows.length + 1);
          expect(got.map((r) => r.slice(0, 6))).toEqual(want.map((r) => r.slice(0, 6)));
          const status = (want[0] as string[]).indexOf('enrich_status');
          for (let i = 1; i < got.length; i++) {
            const g = got[i] as string[];
            const w = want[i] as string[];
            // Never misattributes: a row either carries exactly the record a clean service gives
            // it, or (records the job dropped) ends `missing` with no record at all.
            if (g[status] === 'missing') {
              missing++;
              expect(w[status]).not.toBe('invalid');
              expect(g.slice(status + 3).every((c) => c === '')).toBe(true);
            } else expect(g).toEqual(w);
          }
          // Never pays twice: no more credits than a clean run, one job per batch.
          const charged = after.credits_charged - before.credits_charged;
          expect(charged).toBe(a.summary.creditsCharged);
          expect(after.jobs_submitted - before.jobs_submitted).toBe(a.summary.jobs.total);
          if (!f.drop_records) expect(b.output).toBe(a.output);
        },
      ),
      { numRuns: 60 },
    );
    // The random behaviour really dropped records now and then.
    expect(missing).toBeGreaterThan(0);
    recordFigure('property', { runs, requests, missing_rows: missing });
  }, 180_000);
});
