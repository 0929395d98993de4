import { appendFile, readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BulkApi } from '../../src/pipeline/types.js';
import { LIBRARY_WORDS } from '../../src/pipeline/run/messages.js';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { createClient } from '../../src/api/client.js';
import { sandboxHonoursKeys } from '../api/harness.js';
import { ApiError, EnrichError } from '../../src/errors.js';
import {
  CONTACT_HEADER,
  contactRows,
  fastClient,
  parseCsv,
  runFile,
  SANDBOX_MODES,
  sandboxPerTest,
  tempDir,
  writeCsv,
  type HarnessRun,
  type RunFileOptions,
} from './bulk-harness.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { enrichFile } from '../../src/bulk/enrich-file.js';

const sandbox = sandboxPerTest();

/**
 * Tests of what only a service that honours Idempotency-Key gives (a lost answer retried
 * with the same key): the default sandbox's extra. Money tests run on SANDBOX_MODES.
 */
const DEFAULT_ONLY = SANDBOX_MODES.filter((m) => !m.specOnly);

/** The first line where two outputs differ (a short failure message instead of a 1,500-line diff). */
function firstDifference(a: string, b: string): string | undefined {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  got      ${x[i]}\n  expected ${y[i]}`;
  }
  return undefined;
}

const col = (rows: string[][], name: string) => {
  const i = (rows[0] as string[]).indexOf(name);
  return rows.slice(1).map((r) => r[i] as string);
};

/**
 * A run of `rows` contacts (batches of 100, one at a time) on an account with `credits`:
 * it runs out (exit 5), then the account is topped up to 1,000. What a re-run then does
 * is the test's.
 */
async function ranOutThenToppedUp(specOnly: boolean, credits: number, rows: number) {
  const s = await sandbox({ credits, specOnly });
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(rows));
  const o = { runsDir: dir, batchSize: 100, concurrency: 1 };
  expect((await runFile(s, file, o)).summary.exitCode).toBe(5);
  expect(s.admin.stats().credits_charged).toBe(credits);
  s.admin.updateAccount(s.accountId, { credits: 1000 });
  return { s, file, o };
}

/**
 * A client for a sandbox with random faults: no waiting, and 10 attempts. About 15% of
 * attempts fail in these tests: with the default 5 one request in ~13,000 still fails for
 * good (its batch then differs, correctly, from a clean run's), which a run of ~60 requests
 * met about once in 200 runs (seen on CI); 10 make that one in ~10^8. The product's stays 5.
 */
function patientClient(
  s: SandboxHandle,
  o: Partial<Parameters<typeof createClient>[0]> = {},
): ReturnType<typeof createClient> {
  const base = { baseUrl: s.url, apiKey: s.apiKey, sleep: async () => {}, random: () => 0.5 };
  return createClient({ ...base, retry: { maxAttempts: 10 }, ...o });
}

/** Companies (`Company`, `Website`) with `--top 3`, through `runFile`. */
async function runCompanies(
  s: SandboxHandle,
  rows: string[][],
  o: Partial<RunFileOptions> = {},
): Promise<HarnessRun> {
  const dir = await tempDir();
  const file = await writeCsv(dir, 'co.csv', ['Company', 'Website'], rows);
  return runFile(s, file, {
    kind: 'companies',
    runsDir: dir,
    metadata: { top_matches_returned: 3 },
    ...o,
  });
}

describe('bulk run against the sandbox', () => {
  it.each(SANDBOX_MODES)(
    'keeps every row in order with its cells, sends duplicates once and only valid rows ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const rows = contactRows(10_000, { dupEvery: 10, invalidEvery: 50 });
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
      const { summary, output } = await runFile(s, file, { runsDir: dir });

      const out = parseCsv(output);
      expect(out[0]?.slice(0, 6)).toEqual(CONTACT_HEADER);
      expect(out[0]?.slice(6, 9)).toEqual([
        'enrich_status',
        'enrich_error',
        'enrich_credit_charged',
      ]);
      expect(out.length - 1).toBe(10_000);
      expect(out.slice(1).map((r) => r.slice(0, 6))).toEqual(rows);

      const invalid = 10_000 / 50;
      const duplicates = rows.filter((_, i) => i % 10 === 9 && i % 50 !== 49).length;
      const unique = 10_000 - invalid - duplicates;
      expect(summary.statuses).toMatchObject({
        enriched: 10_000 - invalid,
        invalid,
        failed: 0,
        missing: 0,
      });
      expect(summary.duplicates).toBe(duplicates);
      const stats = s.admin.stats();
      expect(stats.records_submitted).toBe(unique);
      expect(stats.credits_charged).toBe(unique);
      expect(stats.jobs_submitted).toBe(Math.ceil(unique / 100));
      expect(summary.creditsCharged).toBe(unique);
      expect(summary.exitCode).toBe(0);

      // A duplicate carries the same record as the row that was sent, without its charge.
      const status = col(out, 'enrich_status');
      const email = col(out, 'enriched_email');
      const charged = col(out, 'enrich_credit_charged');
      expect(status[9]).toBe('enriched');
      expect(email[9]).toBe(email[8]);
      expect([charged[8], charged[9]]).toEqual(['true', 'false']);
      expect(col(out, 'enrich_error')[49]).toMatch(/needs at least one of/);
    },
  );

  it("spools each job's results byte for byte as the service sent them", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(250));
    const { summary } = await runFile(s, file, { runsDir: dir });
    expect(summary.jobs.ids).toHaveLength(3);
    const runDir = dirname(summary.journal);
    const spools = (await readdir(runDir)).filter((f) => /^results-.*\.json$/.test(f)).sort();
    expect(spools).toEqual(['results-0.json', 'results-1.json', 'results-2.json']);
    for (const [i, jobId] of summary.jobs.ids.entries()) {
      const res = await fetch(`${s.url}/contacts/results/${jobId}.json`, {
        headers: { authorization: `Bearer ${s.apiKey}` },
      });
      expect(res.status).toBe(200);
      // The balance is the account's at each download: the run's may have come before a
      // later batch was charged. Every other byte is as the service sent it.
      const balance = (b: Buffer) => b.toString('latin1').replace(/"remaining_credits":\d+/, '');
      const sent = Buffer.from(await res.arrayBuffer());
      const spooled = await readFile(join(runDir, `results-${i}.json`));
      expect(balance(spooled)).toBe(balance(sent));
      expect(spooled.length - sent.length).toBeLessThanOrEqual(10);
    }
  });

  it('produces failed, invalid, enriched and expired rows, each with its reason', async () => {
    // The sandbox's clock runs half an hour behind the run's, so its jumps past a job's
    // expiry are also past it for the run: a 404 means expired only then (poll.ts).
    let t = Date.now() - 1_800_000;
    const s = await sandbox({ jobMs: 5000, ttlMs: 60_000, now: () => t });
    const dir = await tempDir();
    const rows = contactRows(30, { invalidEvery: 10, noMatchEvery: 4 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    // The first job is downloaded in time; after that the clock jumps past the expiry.
    let polls = 0;
    const api: BulkApi = {
      ...toBulkApi(fastClient(s)),
      results: async (kind, job, url) => {
        polls++;
        const answer = await toBulkApi(fastClient(s)).results(kind, job, url);
        return answer;
      },
    };
    const { summary, output } = await runFile(s, file, {
      runsDir: dir,
      batchSize: 10,
      concurrency: 1,
      api,
      onSleep: () => {
        t += polls <= 2 ? 5000 : 120_000;
      },
    });
    const out = parseCsv(output);
    const status = col(out, 'enrich_status');
    expect(new Set(status)).toEqual(new Set(['enriched', 'not_found', 'invalid', 'expired']));
    expect(status[0]).toBe('not_found');
    expect(col(out, 'enrich_error')[0]).toBe('No match found');
    expect(col(out, 'enrich_error')[status.indexOf('expired')]).toMatch(
      /expired before they were downloaded/,
    );
    expect(summary.exitCode).toBe(3);
  });

  it.each(SANDBOX_MODES)(
    'splits a batch the service refuses as too large, whatever its 400 says (regression: a spec-only 400 failed every row) ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ maxBatch: 40, specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(250));
      const { summary, output } = await runFile(s, file, { runsDir: dir, batchSize: 100 });
      expect(summary.statuses.enriched).toBe(250);
      expect(parseCsv(output).length).toBe(251);
      expect(s.admin.stats().records_submitted).toBe(250);
    },
  );

  it.each(SANDBOX_MODES)(
    'stops submitting when credits run out, keeps what was enriched and exits 5 ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly, credits: 150 });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(1000));
      const { summary, output } = await runFile(s, file, {
        runsDir: dir,
        batchSize: 100,
        concurrency: 1,
      });
      expect(summary.exitCode).toBe(5);
      expect(summary.statuses.enriched).toBe(150);
      expect(summary.statuses.failed).toBe(850);
      expect(s.admin.stats().credits_charged).toBe(150);
      // Not every batch was sent: submission stopped once the shortage was seen.
      expect(s.admin.stats().jobs_submitted).toBeLessThan(10);
      const errors = col(parseCsv(output), 'enrich_error').filter((e) => e !== '');
      expect(errors).toHaveLength(850);
      // The service's own words (the default sandbox names credits; a spec-only one need not).
      if (!specOnly) expect(errors.every((e) => /credits/i.test(e))).toBe(true);
    },
  );

  it.each(SANDBOX_MODES)(
    'the email rule: bad addresses are never sent; a row with another complete combination goes without it and says so ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const header = ['Email', 'First Name', 'Last Name', 'Company'];
      const rows = [
        ['foo', '', '', ''],
        ['bad@', '', '', ''],
        ['@x.com', '', '', ''],
        ['mailto:a@b.com', '', '', ''],
        ['jane doe@acme.com', 'Jane', 'Doe', 'Acme'],
        ['ok@acme.com', '', '', ''],
      ];
      const file = await writeCsv(dir, 'in.csv', header, rows);
      const mapping = { map: { business_email: 'Email' } };
      const { summary, output } = await runFile(s, file, { runsDir: dir, mapping });
      expect(summary.statuses).toMatchObject({ invalid: 4, enriched: 2 });
      expect(s.admin.stats().records_submitted).toBe(2);
      expect(s.admin.stats().credits_charged).toBe(2);
      const out = parseCsv(output);
      expect(col(out, 'enrich_error').slice(0, 4)).toEqual([
        'business_email: not an email address (it has no @) (column "Email")',
        'business_email: not an email address (it has nothing after the @) (column "Email")',
        'business_email: not an email address (it has nothing before the @) (column "Email")',
        'business_email: not an email address (it starts with "mailto:"; the address is what follows) (column "Email")',
      ]);
      expect(col(out, 'enrich_error')[4]).toBe(
        'business_email left out (not an email address: it contains a space); sent without it',
      );
      expect(col(out, 'enrich_error')[5]).toBe('');
    },
  );

  it('--top N without --explode keeps every paid match: matches 2..N in numbered columns', async () => {
    const { summary, output } = await runCompanies(await sandbox(), [
      ['Acme', 'https://acme.com'],
      ['Nomatch Industries', 'nomatch.example'],
    ]);
    expect(summary.creditsCharged).toBe(3);
    const out = parseCsv(output);
    expect(out).toHaveLength(3); // one row per input row
    const names = ['enriched_name', 'enriched_name_2', 'enriched_name_3'].map((c) => col(out, c));
    // Three distinct matches for Acme, all written; none for the company without a match.
    expect(new Set(names.map((n) => n[0])).size).toBe(3);
    expect(names.every((n) => n[0] !== '' && n[1] === '')).toBe(true);
    expect(out[0]).not.toContain('enriched_name_4');
  });

  it.each(SANDBOX_MODES)(
    'a credit retry still running at --timeout ends the run resumable (exit 3), not out of credits (5) ($name)',
    async ({ specOnly }) => {
      let t = Date.now();
      const s = await sandbox({ specOnly, credits: 150, jobMs: 3_600_000, now: () => t });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(200));
      const env = { now: () => t, random: () => 0.5, sleep: async (ms: number) => void (t += ms) };
      const o = { runsDir: dir, batchSize: 100, concurrency: 2, env, timeoutMs: 7_200_000 };
      const first = await runFile(s, file, o);
      expect(first.summary.exitCode).toBe(5);
      expect(first.summary.statuses).toMatchObject({ enriched: 150, failed: 50 });
      // Topped up: the 50 rows that ran out are sent again, and that job outlives --timeout.
      s.admin.updateAccount(s.accountId, { credits: 1000 });
      const second = await runFile(s, file, { ...o, timeoutMs: 600_000 });
      expect(second.summary.stopReason).toBeUndefined();
      expect(second.summary.jobs).toMatchObject({ total: 3, spooled: 2, pending: 1 });
      expect(second.summary.jobs.ids).toHaveLength(3);
      // The run must come back before the retry's results expire (the sandbox's day).
      expect(second.summary.jobs.pendingExpire).toBeGreaterThan(t + 23 * 3_600_000);
      expect(second.summary.exitCode).toBe(3);
      // The 50 rows sent again say what became of that, not that credits ran out.
      const errors = col(parseCsv(second.output), 'enrich_error');
      const retried = errors.filter((e) =>
        /still running at --timeout; run the same command/.test(e),
      );
      expect(retried).toHaveLength(50);
      expect(errors.filter((e) => /credits/i.test(e))).toEqual([]);
      expect(s.admin.stats().jobs_submitted).toBe(3);
      t += 3_600_000;
      const third = await runFile(s, file, o);
      expect(third.summary.exitCode).toBe(0);
      expect(third.summary.statuses.enriched).toBe(200);
      expect(s.admin.stats().jobs_submitted).toBe(3);
      expect(s.admin.stats().credits_charged).toBe(200);
    },
  );

  it.each([
    { answer: 402, code: 'CREDITS_EXHAUSTED', exit: 5, why: 'the account is dry again' },
    { answer: 503, code: 'SERVER_ERROR', exit: 3, why: 'the run is partial and resumable' },
    // Sending the same rows again would be refused again: a usage error, not a resume.
    { answer: 400, code: 'API_VALIDATION', exit: 2, why: 'the service refused what was sent' },
  ] as const)(
    'a credit retry whose POST gets $answer ends with exit $exit: $why',
    async ({ answer, code, exit }) => {
      const { s, file, o } = await ranOutThenToppedUp(false, 150, 200);
      // The only POST of the second run is the retry of the 50 rows that ran out.
      const refusing: BulkApi = {
        ...toBulkApi(fastClient(s)),
        submit: () =>
          Promise.reject(
            new ApiError(code, {
              status: answer,
              method: 'POST',
              path: '/contacts',
              message: 'no',
            }),
          ),
      };
      const second = await runFile(s, file, { ...o, api: refusing });
      expect(second.summary.exitCode).toBe(exit);
      expect(second.summary.jobs).toMatchObject({ spooled: 2, failed: 1 });
      expect(second.summary.statuses).toMatchObject({ enriched: 150, failed: 50 });
    },
  );

  it('refuses options no run can work with, and a state directory it cannot use, as usage errors', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(10));
    for (const [o, why] of [
      [{ concurrency: 0 }, /^concurrency: expected an integer from 1 to 64, got 0/],
      [{ batchSize: 0 }, /^batchSize: expected an integer from 1 to 10000/],
      [{ timeoutMs: Number.NaN }, /^timeoutMs: expected a positive duration/],
      [{ maxCredits: -1 }, /^maxCredits: expected an integer >= 0/],
      [{ baseUrl: 'not a url' }, /baseUrl must be a URL/],
      [{ maxCredit: 5 } as never, /^bulk run: unknown option maxCredit/],
      // Regression: a misspelt request option ran with the default top (and spent on it),
      // a kind of no run and a string top read as TypeErrors or a number.
      [{ request: { tpo: 3 } } as never, /^request: unknown option tpo/],
      [{ kind: 'company' } as never, /^kind: expected contacts or companies, got "company"/],
      [
        { kind: 'companies', request: { top: '3' } } as never,
        /^top: expected an integer from 1 to 10, got "3"/,
      ],
    ] as const) {
      // Before, concurrency 0 left the run pending forever, whatever timeoutMs said. A library
      // caller is told the names of its options, not the CLI's flags.
      const opts = { runsDir: dir, words: LIBRARY_WORDS, ...o };
      await expect(runFile(s, file, opts)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(why),
      });
    }
    const notADir = join(dir, 'in.csv');
    await expect(runFile(s, file, { runsDir: notADir })).rejects.toMatchObject({
      code: 'USAGE',
      exitCode: 2,
      message: expect.stringMatching(/cannot use the state directory .*ENOTDIR/),
    });
    expect(s.admin.stats().jobs_submitted).toBe(0);
  });

  it('a changed file is a new run, with no warning (without a cache it pays again; with one, only for new rows)', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(100));
    const warnings: string[] = [];
    const o = { runsDir: dir, onWarning: (w: string) => warnings.push(w) };
    await runFile(s, file, o);
    await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(110));
    await runFile(s, file, o);
    // runBulk without a cache (test/integration/results-cache.test.ts has the one with it).
    expect(s.admin.stats().credits_charged).toBe(210);
    // Running it again resumes that new run: nothing more to pay.
    await runFile(s, file, o);
    expect(s.admin.stats().credits_charged).toBe(210);
    expect(warnings).toEqual([]);
  });

  it('a file malformed near its end, fixed and run again, pays for no row twice (results cache)', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
    const run = (file: string) =>
      enrichFile({
        kind: 'contacts',
        input: file,
        output: join(dir, 'out.csv'),
        service: { client, baseUrl: s.url },
        runsDir: join(dir, 'runs'),
        cacheDir: join(dir, 'cache'),
        batchSize: 500,
      });
    try {
      const rows = contactRows(2500);
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
      // A quote never closed on the last line: csv-parse can only tell at the end of the file.
      await appendFile(file, 'R9,"Broken,Row,broken@acme.com,Acme,x\r\n');
      await expect(run(file)).rejects.toMatchObject({
        code: 'INPUT_INVALID',
        location: { line: 2502 },
      });
      // No pass over the whole file first: batches went out while it was read...
      const paid = s.admin.stats().credits_charged;
      expect(paid).toBeGreaterThan(0);
      // ...and the fixed file (a new run: new content) pays only for the rows not looked up.
      const fixed = await writeCsv(dir, 'in.csv', CONTACT_HEADER, [
        ...rows,
        ['R9', 'Fixed', 'Row', 'fixed.row@acme.com', 'Acme', ''],
      ]);
      const second = await run(fixed);
      expect(second.exitCode).toBe(0);
      expect(second.cacheHits).toBe(paid);
      expect(s.admin.stats().credits_charged).toBe(2501);
    } finally {
      await client.close();
    }
  });

  it.each(SANDBOX_MODES)(
    'counts a batch an earlier run journaled but never got accepted against --max-credits ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(300));
      const o = { runsDir: dir, batchSize: 100, concurrency: 1, maxCredits: 250 };
      const down: BulkApi = {
        ...toBulkApi(fastClient(s)),
        submit: () => Promise.reject(new EnrichError('NETWORK', 'connection reset')),
      };
      // Batch 0 is journaled, then its POST fails: nothing is charged.
      expect((await runFile(s, file, { ...o, api: down })).summary.exitCode).toBe(6);
      expect(s.admin.stats().credits_charged).toBe(0);
      // The re-run sends batch 0 again: that is new spending, within the same 250.
      const second = await runFile(s, file, o);
      expect(s.admin.stats().credits_charged).toBe(250);
      expect(second.summary.statuses).toMatchObject({ enriched: 250, failed: 50 });
      expect(second.summary.exitCode).toBe(5);
    },
  );

  it.each(SANDBOX_MODES)(
    'sends credit retries only within --max-credits ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 150, 300);
      // 150 rows are left (50 that ran out, 100 never sent): this run may pay for 100 of them.
      const second = await runFile(s, file, { ...o, maxCredits: 100 });
      expect(s.admin.stats().credits_charged).toBe(250);
      expect(second.summary.statuses).toMatchObject({ enriched: 250, failed: 50 });
      expect(second.summary.exitCode).toBe(5);
      const third = await runFile(s, file, o);
      expect(third.summary.exitCode).toBe(0);
      expect(third.summary.statuses.enriched).toBe(300);
      expect(s.admin.stats().credits_charged).toBe(300);
      // The retries' records replace the shortage they answer: no row still reports one.
      expect(col(parseCsv(third.output), 'enrich_error').filter((e) => e !== '')).toEqual([]);
    },
  );

  it.each(SANDBOX_MODES)(
    'a credit retry cut by --max-credits whose answer was lost: resent as journaled only where keys are honoured ($name)',
    async ({ specOnly }) => {
      const { s, file, o } = await ranOutThenToppedUp(specOnly, 50, 100);
      // The retry (cut to 20 rows) reaches the service, but its answer is lost: after its
      // retries our client reports NETWORK to a service that replays keys, UNCONFIRMED to one
      // that has not shown it does (api/calls.ts).
      const real = toBulkApi(fastClient(s));
      const lossy: BulkApi = {
        ...real,
        submit: async (...args) => {
          await real.submit(...args);
          const code = specOnly ? 'UNCONFIRMED' : 'NETWORK';
          throw new EnrichError(code, 'connection reset after the request was sent');
        },
      };
      await runFile(s, file, { ...o, maxCredits: 20, api: lossy });
      expect(s.admin.stats().credits_charged).toBe(70);
      const third = await runFile(s, file, { ...o, maxCredits: 20 });
      if (!specOnly) {
        // Resent exactly as journaled: the same body and key, so the service replays that job.
        expect(third.summary.statuses).toMatchObject({ enriched: 70, failed: 30 });
        expect(s.admin.stats().credits_charged).toBe(70);
        const fourth = await runFile(s, file, o);
        expect(fourth.summary.exitCode).toBe(0);
        expect(fourth.summary.statuses.enriched).toBe(100);
        expect(s.admin.stats().credits_charged).toBe(100);
        return;
      }
      // Not sent again by itself: the service would charge those 20 rows a second time.
      expect(third.summary.exitCode).toBe(3);
      expect(third.summary.jobs.unconfirmed).toBe(1);
      expect(third.summary.statuses).toMatchObject({ enriched: 50, failed: 50 });
      expect(s.admin.stats().credits_charged).toBe(70);
      // Asked to, it sends them again (and the service charges them again, as the flag warns).
      const fourth = await runFile(s, file, { ...o, resendUnconfirmed: true });
      expect(fourth.summary.exitCode).toBe(0);
      expect(fourth.summary.statuses.enriched).toBe(100);
      expect(s.admin.stats().credits_charged).toBe(120);
    },
  );

  it.each(SANDBOX_MODES)(
    'never spends more than --max-credits and resumes with a larger budget without paying twice ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(300));
      const first = await runFile(s, file, { runsDir: dir, batchSize: 100, maxCredits: 120 });
      expect(s.admin.stats().credits_charged).toBe(120);
      expect(first.summary.statuses).toMatchObject({ enriched: 120, failed: 180 });
      expect(first.summary.exitCode).toBe(5);
      const second = await runFile(s, file, { runsDir: dir, batchSize: 100, maxCredits: 1000 });
      expect(second.summary.resumed).toBe(true);
      expect(second.summary.statuses.enriched).toBe(300);
      expect(s.admin.stats().credits_charged).toBe(300);
      expect(s.admin.stats().records_submitted).toBe(300);
    },
  );

  // A service that honours Idempotency-Key (the default sandbox): answers lost after the request
  // was sent are retried with the same key, so the output equals a clean run's. Against the
  // spec-only sandbox such batches stay unconfirmed: the test above.
  it.each(DEFAULT_ONLY)(
    'gives the same output with faults (429, 5xx, resets, truncation, shuffled, no custom_fields) ($name)',
    async ({ specOnly }) => {
      const dir = await tempDir();
      const file = await writeCsv(
        dir,
        'in.csv',
        CONTACT_HEADER,
        contactRows(1500, { dupEvery: 7, invalidEvery: 40 }),
      );
      const clean = await sandbox({ specOnly });
      const a = await runFile(clean, file, { runsDir: `${dir}/a`, batchSize: 50 });
      await clean.close();
      const faulty = await sandbox({
        specOnly,
        faults: {
          rates: { '500': 0.05, '429': 0.05, '503': 0.01 },
          reset_rate: 0.02,
          reset_after_rate: 0.02,
          truncate_rate: 0.01,
          shuffle_results: true,
          drop_custom_fields: 0.5,
        },
      });
      const client = patientClient(faulty, { idempotencyStore: sandboxHonoursKeys() });
      const b = await runFile(faulty, file, { runsDir: `${dir}/b`, batchSize: 50, client });
      await client.close();
      expect(firstDifference(b.output, a.output)).toBeUndefined();
      const stats = faulty.admin.stats();
      // The faults did happen: the run got through them, not around them.
      expect(
        (stats.requests_by_status['500'] ?? 0) + (stats.requests_by_status['429'] ?? 0),
      ).toBeGreaterThan(0);
      const unique = a.summary.valid - a.summary.duplicates;
      expect(stats.credits_charged).toBe(unique);
      expect(stats.jobs_submitted).toBe(Math.ceil(unique / 50));
    },
  );

  it('spec-only, with faults that cut answers after the request was sent: never pays twice, downloads every job it holds, and bounds the spend it could not see', async () => {
    const dir = await tempDir();
    const rows = contactRows(1500, { dupEvery: 7, invalidEvery: 40 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const clean = await sandbox({ specOnly: true });
    const a = await runFile(clean, file, { runsDir: `${dir}/a`, batchSize: 50 });
    const cleanCharged = clean.admin.stats().credits_charged;
    await clean.close();
    const faulty = await sandbox({
      specOnly: true,
      faults: {
        // The first submission is processed and its answer cut, whatever the random faults do.
        next: [{ path: '/contacts', reset: true, after: true }],
        rates: { '500': 0.03, '429': 0.05 },
        reset_rate: 0.02,
        reset_after_rate: 0.08,
        truncate_rate: 0.03,
        shuffle_results: true,
        drop_custom_fields: 0.5,
      },
    });
    const client = patientClient(faulty);
    const b = await runFile(faulty, file, { runsDir: `${dir}/b`, batchSize: 50, client });
    await client.close();
    const stats = faulty.admin.stats();
    // The faults did cut answers: those batches are unconfirmed, never sent a second time.
    expect(b.summary.jobs.unconfirmed).toBeGreaterThan(0);
    expect(b.summary.exitCode).toBe(3);
    expect(stats.credits_charged).toBeLessThanOrEqual(cleanCharged);
    // Each batch was posted once: a lost answer may or may not have become a job.
    expect(stats.jobs_submitted).toBeLessThanOrEqual(b.summary.jobs.total);
    expect(stats.jobs_submitted).toBeGreaterThanOrEqual(b.summary.jobs.spooled);
    // Every job the service acknowledged was downloaded.
    expect(b.summary.jobs).toMatchObject({ failed: 0, pending: 0, expired: 0 });
    expect(b.summary.jobs.spooled + b.summary.jobs.unconfirmed).toBe(b.summary.jobs.total);
    // Spend: exact for what came back; what did not is bounded by the rows whose answer was lost.
    expect(b.summary.creditsCharged).toBeLessThan(stats.credits_charged);
    expect(stats.credits_charged).toBeLessThanOrEqual(
      b.summary.creditsCharged + b.summary.chargeUnknownRows,
    );
    expect(b.summary.chargeUnknownRows).toBe(b.summary.unconfirmedRows);
    // The last figure the service sent: a submission whose answer was lost after it may
    // have charged later still.
    const balance = faulty.admin.getAccount(faulty.accountId)?.credits ?? 0;
    expect(b.summary.remainingCredits).toBeGreaterThanOrEqual(balance);
    expect(b.summary.remainingCredits! - balance).toBeLessThanOrEqual(b.summary.chargeUnknownRows);
    // Rows: each confirmed one as in the clean run; the others failed, charge unknown, saying why.
    const good = parseCsv(a.output);
    const got = parseCsv(b.output);
    const charged = got[0]!.indexOf('enrich_credit_charged');
    let unknown = 0;
    for (let i = 1; i < got.length; i++) {
      if (!/^not confirmed: /.test(got[i]![7]!)) {
        expect(got[i]).toEqual(good[i]);
        continue;
      }
      expect(got[i]!.slice(0, 7)).toEqual([...good[i]!.slice(0, 6), 'failed']);
      expect(got[i]![7]).toMatch(/may have received and charged/);
      // The copy that was sent: charge unknown; its duplicates were never sent themselves.
      expect(['unknown', 'false']).toContain(got[i]![charged]);
      if (got[i]![charged] === 'unknown') unknown++;
    }
    expect(unknown).toBe(b.summary.unconfirmedRows);
  });

  it.each(SANDBOX_MODES)(
    'a service that allows 1 request/s, with --concurrency 8: 2,000 rows at --batch-size 100 finish with exit 0 ($name)',
    async ({ specOnly }) => {
      // One clock for the sandbox and the client: the waits the 429s ask for pass at once.
      let t = Date.now();
      const s = await sandbox({ specOnly, rateLimit: 1, now: () => t });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(2000));
      const sleep = async (ms: number) => void (t += ms);
      const client = createClient({
        baseUrl: s.url,
        apiKey: s.apiKey,
        clock: { now: () => t },
        sleep,
        random: () => 0.5,
      });
      const env = { now: () => t, random: () => 0.5, sleep };
      // The run's deadline bounds each call's waits, as the CLI gives it (toBulkApi's deadline):
      // without it a call had 2 minutes of this shared clock, which the 8 jobs' waits advance
      // together, and under load one gave up (RATE_LIMITED after 7 attempts, 200 rows failed).
      const api = toBulkApi(client, { deadline: t + 7_200_000 });
      const o = { runsDir: dir, batchSize: 100, concurrency: 8, api, env };
      const { summary } = await runFile(s, file, { ...o, timeoutMs: 7_200_000 });
      await client.close();
      const stats = s.admin.stats();
      expect(stats.requests_by_status['429'] ?? 0).toBeGreaterThan(0);
      expect(summary.exitCode).toBe(0);
      expect(summary.statuses.enriched).toBe(2000);
      expect(stats.credits_charged).toBe(2000);
      expect(stats.jobs_submitted).toBe(20);
    },
  );

  it('enriches companies with --top 3 and --explode', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(
      dir,
      'co.csv',
      ['Company', 'Website'],
      [
        ['Acme', 'https://acme.com'],
        ['Globex', ''],
        ['', ''],
        ['Nomatch Industries', 'nomatch.example'],
      ],
    );
    const { summary, output } = await runFile(s, file, {
      kind: 'companies',
      runsDir: dir,
      metadata: { top_matches_returned: 3 },
      output: { explode: true },
    });
    const out = parseCsv(output);
    expect(out[0]?.slice(0, 7)).toEqual([
      'Company',
      'Website',
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'enrich_match_rank',
    ]);
    expect(out.slice(1).map((r) => [r[0], r[2], r[6]])).toEqual([
      ['Acme', 'enriched', '1'],
      ['Acme', 'enriched', '2'],
      ['Acme', 'enriched', '3'],
      ['Globex', 'enriched', '1'],
      ['Globex', 'enriched', '2'],
      ['Globex', 'enriched', '3'],
      ['', 'invalid', ''],
      ['Nomatch Industries', 'not_found', ''],
    ]);
    expect(summary.statuses).toMatchObject({ enriched: 2, invalid: 1, not_found: 1, failed: 0 });
    expect(col(out, 'enriched_name')[0]).not.toBe('');
  });

  it.each(SANDBOX_MODES)(
    "says so when credits ran out part-way through a company's matches ($name)",
    async ({ specOnly }) => {
      const rows = [
        ['Acme', 'https://acme.com'],
        ['Globex', 'https://globex.com'],
      ];
      const s = await sandbox({ specOnly, credits: 4 });
      const { summary, output } = await runCompanies(s, rows, { output: { explode: true } });
      expect(summary.exitCode).toBe(5);
      const out = parseCsv(output);
      expect(out.slice(1).map((r) => [r[0], r[2], r[3], r[6]])).toEqual([
        ['Acme', 'enriched', '', '1'],
        ['Acme', 'enriched', '', '2'],
        ['Acme', 'enriched', '', '3'],
        ['Globex', 'enriched', expect.stringMatching(/^2 of 3 matches not returned: \S/), '1'],
      ]);
    },
  );

  it('--no-wait submits and returns the job ids; the same run later writes the output', async () => {
    let t = Date.now();
    const s = await sandbox({ jobMs: 10_000, now: () => t });
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(250));
    const first = await runFile(s, file, { runsDir: dir, wait: false });
    expect(first.summary.written).toBe(false);
    expect(first.summary.jobs.ids).toHaveLength(3);
    expect(first.summary.exitCode).toBe(0);
    t += 10_000;
    const second = await runFile(s, file, { runsDir: dir, wait: false });
    expect(second.summary.written).toBe(true);
    expect(second.summary.statuses.enriched).toBe(250);
    expect(s.admin.stats().jobs_submitted).toBe(3);
  });

  // Spec-only: the client resends a possibly-accepted POST trusting Idempotency-Key (pays twice).
  it.each(SANDBOX_MODES)(
    'resumes after a crash mid-run without submitting any batch twice, unless asked to ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(1000));
      // The default sandbox echoes Idempotency-Key, and this client has seen it do so; a
      // spec-only service never shows it honours keys.
      const client = () =>
        createClient({
          baseUrl: s.url,
          apiKey: s.apiKey,
          sleep: async () => {},
          random: () => 0.5,
          ...(specOnly ? {} : { idempotencyStore: sandboxHonoursKeys() }),
        });
      const real = toBulkApi(client());
      let submits = 0;
      // The "process" dies right after the 4th POST reached the service, before its answer.
      const crashing: BulkApi = {
        ...real,
        submit: async (...args) => {
          const job = await real.submit(...args);
          if (++submits === 4) throw new Error('simulated crash');
          return job;
        },
      };
      const crashed = await runFile(s, file, { runsDir: dir, api: crashing, concurrency: 1 });
      expect(crashed.summary.exitCode).not.toBe(0);
      const again = await runFile(s, file, { runsDir: dir, client: client() });
      expect(again.summary.resumed).toBe(true);
      expect(s.admin.stats().jobs_submitted).toBe(10);
      expect(s.admin.stats().credits_charged).toBe(1000);
      if (specOnly) {
        // Sent again only when asked: the service may have charged those 100 rows already.
        expect(again.summary).toMatchObject({ exitCode: 3, unconfirmedRows: 100 });
        expect(again.summary.statuses.enriched).toBe(900);
        expect(again.output).toContain('may have received and charged these rows');
        const resent = await runFile(s, file, {
          runsDir: dir,
          client: client(),
          resendUnconfirmed: true,
        });
        expect(resent.summary).toMatchObject({ exitCode: 0, unconfirmedRows: 0 });
        expect(resent.summary.statuses.enriched).toBe(1000);
        expect(s.admin.stats().jobs_submitted).toBe(11); // as warned: that batch paid twice
      } else {
        expect(again.summary.exitCode).toBe(0);
        expect(again.summary.statuses.enriched).toBe(1000);
      }
      const journal = await readFile(again.summary.journal, 'utf8');
      expect(journal).not.toContain(s.apiKey);
    },
  );

  it.each(SANDBOX_MODES)(
    'a key revoked mid-run ends with exit 4, keeping the rows already enriched ($name)',
    async ({ specOnly }) => {
      const s = await sandbox({ specOnly });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(500));
      const key = s.admin.createKey({ name: 'cron' });
      const real = toBulkApi(fastClient(s, key.api_key));
      let submits = 0;
      const api: BulkApi = {
        ...real,
        submit: async (...args) => {
          const job = await real.submit(...args);
          if (++submits === 2) s.admin.revokeKey(key.id);
          return job;
        },
      };
      const { summary, output } = await runFile(s, file, { runsDir: dir, api, concurrency: 1 });
      expect(summary.exitCode).toBe(4);
      expect(summary.written).toBe(true);
      expect(summary.stopReason?.code).toBe('AUTH_INVALID');
      const status = col(parseCsv(output), 'enrich_status');
      expect(status).toHaveLength(500);
      expect(status.filter((x) => x === 'failed')).toHaveLength(500 - summary.statuses.enriched);
      // With a new key the same command resumes: the charged job is downloaded, nothing is paid twice.
      const fresh = s.admin.createKey({ account_id: s.accountId });
      const again = await runFile(s, file, { runsDir: dir, client: fastClient(s, fresh.api_key) });
      expect(again.summary.exitCode).toBe(0);
      expect(again.summary.statuses.enriched).toBe(500);
      expect(s.admin.stats().credits_charged).toBe(500);
      expect(s.admin.stats().jobs_submitted).toBe(5);
    },
  );

  it.each(SANDBOX_MODES)(
    'gives up waiting at --timeout with exit 3, then the same run resumes the jobs ($name)',
    async ({ specOnly }) => {
      let t = Date.now();
      const s = await sandbox({ specOnly, jobMs: 3_600_000, now: () => t });
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(150));
      const env = { now: () => t, random: () => 0.5, sleep: async (ms: number) => void (t += ms) };
      const first = await runFile(s, file, { runsDir: dir, timeoutMs: 600_000, env });
      expect(first.summary.exitCode).toBe(3);
      expect(first.summary.jobs.pending).toBe(2);
      const errors = col(parseCsv(first.output), 'enrich_error');
      expect(errors[0]).toMatch(/still running at --timeout; run the same command again to resume/);
      t += 3_600_000;
      const second = await runFile(s, file, { runsDir: dir, env });
      expect(second.summary.exitCode).toBe(0);
      expect(second.summary.statuses.enriched).toBe(150);
      expect(s.admin.stats().jobs_submitted).toBe(2);
    },
  );

  it("--id-column sends each row's own id in custom_fields next to the row number", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(30));
    const real = toBulkApi(fastClient(s));
    const sent: unknown[] = [];
    const api: BulkApi = {
      ...real,
      submit: (kind, body, idem) => {
        sent.push(...body.items);
        return real.submit(kind, body, idem);
      },
    };
    const run = await runFile(s, file, { runsDir: dir, api, idColumn: 0 });
    expect(run.summary.statuses.enriched).toBe(30);
    expect(sent).toHaveLength(30);
    expect(sent[0]).toMatchObject({ custom_fields: { enrich_row: 0, enrich_id: 'R000000' } });
    expect(sent[29]).toMatchObject({ custom_fields: { enrich_row: 29, enrich_id: 'R000029' } });
  });

  it('rows whose records the job did not return end missing, never attached to another row', async () => {
    const s = await sandbox({
      faults: { drop_records: 0.2, shuffle_results: true, drop_custom_fields: 0.3 },
    });
    const dir = await tempDir();
    const rows = contactRows(500);
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const { summary, output } = await runFile(s, file, { runsDir: dir });
    const out = parseCsv(output);
    const status = col(out, 'enrich_status');
    const email = col(out, 'enriched_email');
    expect(summary.statuses.missing).toBeGreaterThan(50);
    expect(summary.statuses.enriched + summary.statuses.missing).toBe(500);
    expect(summary.exitCode).toBe(0);
    // They were sent: whether they were charged is unknown, and counted so (regression:
    // reported as nothing sent, and the service's charges for them went unsaid).
    expect(summary.chargeUnknownRows).toBe(summary.statuses.missing);
    const charged = col(out, 'enrich_credit_charged');
    status.forEach((st, i) => {
      if (st === 'enriched') expect(email[i]).toBe(rows[i]?.[3]);
      else {
        expect(col(out, 'enrich_error')[i]).toMatch(/no result for this row/);
        expect(charged[i]).toBe('unknown');
      }
    });
  });
});
