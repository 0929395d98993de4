import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { CACHE_FILE, clearCache, openResultsCache } from '../../src/cache/results-cache.js';
import { enrichFile } from '../../src/index.js';
import type { SandboxOptions } from '../../src/sandbox/index.js';

type SandboxFaults = SandboxOptions['faults'];
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  SANDBOX_MODES,
  tempDir,
  writeCsv,
} from './bulk-harness.js';
import {
  clientForTest as clientFor,
  sandboxForTest as sandbox,
  type TestEnd as Ctx,
} from './bulk-harness.js';

/** The two sandbox modes of each case run side by side (`it.concurrent.for(SANDBOX_MODES)`, each
 * pair in a describe of its own): each has its own sandbox, client, temp dir, runs and cache. */

/** A sandbox, a client, and a temp dir with its own results cache and state. */
async function rig(
  ctx: Ctx,
  o: { jobMs?: number; specOnly?: boolean; faults?: SandboxFaults; credits?: number } = {},
) {
  const s = await sandbox(ctx, { jobMs: 0, ...o });
  const dir = await tempDir();
  const client = clientFor(ctx, { baseUrl: s.url, apiKey: s.apiKey });
  const warnings: string[] = [];
  const run = (input: string, output: string, more: Record<string, unknown> = {}) =>
    enrichFile({
      kind: 'contacts',
      input,
      output: join(dir, output),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
      batchSize: 20,
      onWarning: (w) => warnings.push(w),
      ...more,
    });
  const charged = () => s.admin.stats().credits_charged;
  return { s, dir, run, charged, warnings };
}

const CACHED_AT = CONTACT_HEADER.length + 3;

describe('the results cache: never pay twice for the same lookup', () => {
  it('enrichFile without a service is a usage error, not a TypeError', async () => {
    const dir = await tempDir();
    const input = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(2));
    await expect(
      enrichFile({ kind: 'contacts', input, output: join(dir, 'o.csv') } as never),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/^enrichFile: service is required/),
    });
  });

  describe('jobs an earlier run left not downloaded', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'jobs an earlier run left not downloaded (--no-wait, a kill) before the file grew are downloaded first: no row is paid twice ($name)',
      async ({ specOnly }, ctx) => {
        // Regression: the grown file was a new run that paid again for every row of the jobs
        // the earlier run had sent and never downloaded.
        // Jobs of a minute, done when the sandbox's clock is moved on (the later runs' waits
        // move it): the first run's one look at each finds it running however loaded the
        // machine is (with jobs of 150 ms, a slow first run downloaded some of them itself, and
        // fewer than 3 were left).
        const { s, dir, run: runOf, warnings } = await rig(ctx, { jobMs: 60_000, specOnly });
        const run = (output: string, more: Record<string, unknown> = {}) =>
          runOf(join(dir, 'leads.csv'), output, more);
        const day1 = contactRows(60);
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, day1);
        const first = await run('out1.csv', { wait: false });
        expect(first.exitCode).toBe(0);
        expect(s.admin.stats().credits_charged).toBe(60); // charged when submitted
        const extra = ['R999999', 'New', 'Person', 'new.person@fresh.io', 'Fresh Inc', ''];
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, [...day1, extra]);
        s.admin.advanceClock(61_000);
        const sleep = async (ms: number) => void s.admin.advanceClock(ms);
        const second = await run('out2.csv', {
          env: { now: Date.now, random: Math.random, sleep },
        });
        expect(second.exitCode).toBe(0);
        expect(s.admin.stats().credits_charged).toBe(61);
        expect(second.creditsCharged).toBe(1);
        expect(second.cacheHits).toBe(60);
        expect(second.statuses.enriched).toBe(61);
        expect(warnings).toEqual([
          expect.stringMatching(
            /^an earlier run of .*leads\.csv \(before the file changed\) left 3 job\(s\) not downloaded: downloading them first/,
          ),
        ]);
        // The earlier run's journal holds its jobs as downloaded now: a third run says nothing.
        const third = await run('out3.csv');
        expect(third.creditsCharged).toBe(0);
        expect(warnings).toHaveLength(1);
      },
    );
  });

  describe("an earlier run's job downloaded after a top-up", () => {
    it.concurrent.for(SANDBOX_MODES)(
      "an earlier run's job downloaded after a top-up: the rows it may have skipped for credits are not cached as no-match, and the grown file pays for them once ($name)",
      async ({ specOnly }, ctx) => {
        // Regression (F1): its answer, read with the balance after the top-up, filed the 13 rows
        // the job skipped for credits as no-match for a week: the grown file wrote them not_found.
        let t = Date.now();
        const s = await sandbox(ctx, { credits: 5, jobMs: 60_000, specOnly, now: () => t });
        const dir = await tempDir();
        const client = clientFor(ctx, { baseUrl: s.url, apiKey: s.apiKey, sleep: async () => {} });
        const env = {
          now: () => t,
          random: () => 0.5,
          sleep: async (ms: number) => void (t += ms),
        };
        const input = join(dir, 'leads.csv');
        const run = (output: string, more: Record<string, unknown> = {}) =>
          enrichFile({
            kind: 'contacts',
            input,
            output: join(dir, output),
            service: { client, baseUrl: s.url },
            runsDir: join(dir, 'runs'),
            cacheDir: join(dir, 'cache'),
            env,
            ...more,
          });
        const day1 = contactRows(21, { noMatchEvery: 7 });
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, day1);
        expect((await run('out1.csv', { wait: false })).jobs.pending).toBe(1);
        s.admin.updateAccount(s.accountId, { credits: 1000 });
        t += 60_000;
        const extra = ['R999999', 'New', 'Person', 'new.person@fresh.io', 'Fresh Inc', ''];
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, [...day1, extra]);
        const second = await run('out2.csv');
        expect(second.exitCode).toBe(0);
        // The 5 rows the job paid for come from the cache; the 16 others and the new row are sent.
        expect(second.cacheHits).toBe(5);
        expect(second.statuses).toMatchObject({ enriched: 19, not_found: 3, failed: 0 });
        expect(s.admin.stats().credits_charged).toBe(19);
      },
    );
  });

  it('--no-dedupe rows of one request answered without row ids are kept as one answer, not their copies together (regression: two records per contact)', async (ctx) => {
    const { dir, run, charged } = await rig(ctx, { faults: { drop_custom_fields: true } });
    const distinct = contactRows(10);
    const twice = distinct.flatMap((r) => [r, r]);
    const first = await run(await writeCsv(dir, 'twice.csv', CONTACT_HEADER, twice), 'o1.csv', {
      dedupe: false,
    });
    expect([first.exitCode, charged()]).toEqual([0, 20]);
    const again = await run(await writeCsv(dir, 'once.csv', CONTACT_HEADER, distinct), 'o2.csv');
    expect(again.cacheHits).toBe(10);
    expect(again.creditsSaved).toBe(10);
    expect(charged()).toBe(20);
  });

  it('day 2 = day 1 plus one row charges exactly the new row, with no warning', async (ctx) => {
    const { dir, run, charged, warnings } = await rig(ctx);
    const day1 = contactRows(40, { dupEvery: 10, noMatchEvery: 9 });
    const first = await run(await writeCsv(dir, 'day1.csv', CONTACT_HEADER, day1), 'out1.csv');
    expect(first.exitCode).toBe(0);
    const paid = charged();
    expect(paid).toBe(first.creditsCharged);
    expect(first.cacheHits).toBe(0);

    const extra = ['R999999', 'New', 'Person', 'new.person@fresh.io', 'Fresh Inc', ''];
    const day2 = [...day1, extra];
    const second = await run(await writeCsv(dir, 'day2.csv', CONTACT_HEADER, day2), 'out2.csv');
    expect(second.exitCode).toBe(0);
    expect(charged() - paid).toBe(1);
    expect(second.creditsCharged).toBe(1);
    expect(second.cacheHits).toBe(first.valid - first.duplicates);
    expect(second.creditsSaved).toBe(paid);
    expect(warnings).toEqual([]);

    const out1 = parseCsv(await readFile(join(dir, 'out1.csv'), 'utf8'));
    const out2 = parseCsv(await readFile(join(dir, 'out2.csv'), 'utf8'));
    expect(out2[0]![CACHED_AT]).toBe('enrich_cached_at');
    for (let i = 1; i < out1.length; i++) {
      const [a, b] = [out1[i]!, out2[i]!];
      expect(b[CONTACT_HEADER.length]).toBe(a[CONTACT_HEADER.length]); // same status
      expect(b.slice(CACHED_AT + 1)).toEqual(a.slice(CACHED_AT + 1)); // same enrichment
      expect(b[CONTACT_HEADER.length + 2]).toBe(a[CONTACT_HEADER.length + 2] === '' ? '' : 'false');
      expect(a[CACHED_AT]).toBe('');
      expect(Number.isNaN(Date.parse(b[CACHED_AT]!))).toBe(false);
    }
    const last = out2[out2.length - 1]!;
    expect([last[CONTACT_HEADER.length], last[CONTACT_HEADER.length + 2], last[CACHED_AT]]).toEqual(
      ['enriched', 'true', ''],
    );
  });

  describe("rows a job's answer left out (missing) are not sent again by another file's run", () => {
    it.concurrent.for(SANDBOX_MODES)(
      'paid for once: another file writes them failed, --resend-unconfirmed sends them ($name; chaos campaign: 10 distinct rows, 13 credits)',
      async ({ specOnly }, ctx) => {
        // The service charges every row of the job, then leaves some out of its answer.
        const { s, dir, run, charged } = await rig(ctx, {
          specOnly,
          faults: { drop_records: 0.3 },
        });
        const rows = contactRows(30);
        const first = await run(await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows), 'a-out.csv');
        const missing = first.statuses.missing;
        expect(missing).toBeGreaterThan(0);
        expect(charged()).toBe(30);
        s.admin.setFaults({});
        // The same rows in another file (another column order): nothing sent again by itself.
        const order = [...CONTACT_HEADER.keys()].reverse();
        const other = await writeCsv(
          dir,
          'b.csv',
          order.map((i) => CONTACT_HEADER[i]!),
          rows.map((r) => order.map((i) => r[i]!)),
        );
        const second = await run(other, 'b-out.csv');
        expect(charged()).toBe(30);
        expect(second.statuses.failed).toBe(missing);
        expect(second.exitCode).toBe(3);
        // Asked to, it sends them (and may pay again: they were charged).
        const third = await run(other, 'b-out.csv', { resendUnconfirmed: true });
        expect(third.statuses.enriched).toBe(30);
        expect(charged()).toBe(30 + missing);
        // The file whose job left them out still writes them missing, sending nothing.
        const again = await run(join(dir, 'a.csv'), 'a-out.csv');
        expect(again.statuses.missing).toBe(missing);
        expect(charged()).toBe(30 + missing);
      },
    );
  });

  it('the same rows in another file, column order and encoding cost nothing', async (ctx) => {
    const { dir, run, charged } = await rig(ctx);
    const rows = contactRows(30);
    await run(await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows), 'a-out.csv');
    const paid = charged();
    expect(paid).toBe(30);
    // Columns reversed, UTF-16LE with a BOM, semicolons, and the emails in upper case.
    const order = [...CONTACT_HEADER.keys()].reverse();
    const lines = [
      CONTACT_HEADER,
      ...rows.map((r) => [...r.slice(0, 3), r[3]!.toUpperCase(), ...r.slice(4)]),
    ]
      .map((r) => order.map((i) => `"${r[i]!.replace(/"/g, '""')}"`).join(';'))
      .join('\r\n');
    const other = join(dir, 'b.csv');
    await writeFile(
      other,
      Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(lines, 'utf16le')]),
    );
    const summary = await run(other, 'b-out.json');
    expect(summary.statuses.enriched).toBe(30);
    expect(summary.cacheHits).toBe(30);
    expect(charged()).toBe(paid);
    const json = JSON.parse(await readFile(join(dir, 'b-out.json'), 'utf8')) as {
      credit_charged: boolean;
      cached_at: string | null;
    }[];
    expect(json.every((r) => r.credit_charged === false && r.cached_at !== null)).toBe(true);
  });

  describe('a name in NFC and in NFD', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a name in NFC and in NFD (Windows and Mac exports) is paid for once, in one file and across files; the output keeps the cells as read ($name)',
      async ({ specOnly }, ctx) => {
        // Regression: both forms were sent and charged, and neither was a cache hit for the other.
        const { dir, run, charged } = await rig(ctx, { specOnly });
        const people = [
          ['José', 'Núñez', 'Telefónica España'],
          ['Zoë', 'Brontë', 'Société Générale'],
          ['Łukasz', 'Wójcik', 'Kraków Sp. z o.o.'],
          ['François', 'Müller', 'Nestlé'],
        ];
        const rows = (form: 'NFC' | 'NFD') =>
          people.map(([first, last, company], i) =>
            [`R${i}`, first!, last!, '', company!, `note ${i}`].map((c) => c.normalize(form)),
          );
        const [composed, decomposed] = [rows('NFC'), rows('NFD')];
        const twins = await writeCsv(dir, 'twins.csv', CONTACT_HEADER, [
          composed[0]!,
          [...decomposed[0]!.slice(0, 5), 'the Mac copy'],
        ]);
        const first = await run(twins, 'twins-out.csv');
        expect([first.exitCode, first.duplicates, first.creditsCharged, charged()]).toEqual([
          0, 1, 1, 1,
        ]);
        const out = parseCsv(await readFile(join(dir, 'twins-out.csv'), 'utf8'));
        expect(out[2]!.slice(0, CONTACT_HEADER.length)).toEqual([
          ...decomposed[0]!.slice(0, 5),
          'the Mac copy',
        ]);
        expect(out[2]![CONTACT_HEADER.length]).toBe(out[1]![CONTACT_HEADER.length]);

        await run(await writeCsv(dir, 'nfc.csv', CONTACT_HEADER, composed), 'nfc-out.csv');
        const paid = charged();
        expect(paid).toBe(4);
        const copy = await run(
          await writeCsv(dir, 'nfd.csv', CONTACT_HEADER, decomposed),
          'nfd-out.csv',
        );
        expect([copy.cacheHits, copy.creditsCharged, charged()]).toEqual([4, 0, paid]);
      },
    );
  });

  it('--refresh and --max-age 0s pay again; --dry-run shows the hits', async (ctx) => {
    const { dir, run, charged } = await rig(ctx);
    const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
    await run(input, 'o1.csv');
    expect(charged()).toBe(10);
    expect((await run(input, 'o2.csv', { restart: true })).cacheHits).toBe(10);
    expect(charged()).toBe(10);
    const refreshed = await run(input, 'o3.csv', { refresh: true });
    expect([refreshed.cacheHits, refreshed.creditsCharged]).toEqual([0, 10]);
    expect(charged()).toBe(20);
    const aged = await run(input, 'o4.csv', { maxAgeMs: 0, restart: true });
    expect([aged.cacheHits, aged.creditsCharged]).toEqual([0, 10]);
    expect(charged()).toBe(30);
  });

  describe('a second --refresh of the same file looks every row up again', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a second --refresh of the same file looks every row up again; an unfinished one (--no-wait) is resumed, paying nothing twice; --max-age 0s does not resume a finished run either ($name)',
      async ({ specOnly }, ctx) => {
        // Regression: the second --refresh "resumed" the first one (finished, its output
        // written): nothing was looked up again, last week's answers with exit 0.
        const { dir, run, charged } = await rig(ctx, { specOnly, jobMs: 300 });
        const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
        await run(input, 'o1.csv');
        expect(charged()).toBe(10);
        const submitted = await run(input, 'o2.csv', { refresh: true, wait: false });
        expect([submitted.written, charged()]).toEqual([false, 20]);
        const collected = await run(input, 'o2.csv', { refresh: true });
        expect([collected.resumed, collected.written, charged()]).toEqual([true, true, 20]);
        const again = await run(input, 'o3.csv', { refresh: true });
        expect([again.resumed, again.cacheHits, again.creditsCharged]).toEqual([false, 0, 10]);
        expect(charged()).toBe(30);
        // The first (default) run is finished too: under --max-age 0s it is not resumed either.
        const aged = await run(input, 'o4.csv', { maxAgeMs: 0 });
        expect([aged.resumed, aged.cacheHits, aged.creditsCharged]).toEqual([false, 0, 10]);
        expect(charged()).toBe(40);
        // Within the max age, the same command resumes the finished run, sending nothing.
        const resumed = await run(input, 'o5.csv');
        expect([resumed.resumed, resumed.creditsCharged, charged()]).toEqual([true, 0, 40]);
        const out = (name: string) => readFile(join(dir, name), 'utf8');
        expect(await out('o5.csv')).toBe(await out('o4.csv'));
      },
    );
  });

  describe('a run left with paid jobs not downloaded', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run left with paid jobs not downloaded, then the same file under --refresh or --no-cache: it stops before sending, naming the command that downloads them; restart pays ($name)',
      async ({ specOnly }, ctx) => {
        // Regression: --refresh is another run (its identity says so), which neither resumed nor
        // settled the killed one: it paid for the same 10 rows again, their paid answers unseen.
        const { dir, run, charged } = await rig(ctx, { specOnly, jobMs: 300 });
        const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
        const submitted = await run(input, 'o1.csv', {
          wait: false,
          command: 'enrich contacts a.csv',
        });
        expect([submitted.written, charged()]).toEqual([false, 10]);
        for (const more of [{ refresh: true }, { cache: false }])
          await expect(run(input, 'o2.csv', more)).rejects.toMatchObject({
            code: 'USAGE',
            exitCode: 2,
            message: expect.stringMatching(
              /^an unfinished run of .*a\.csv with the cache as usual left 1 job\(s\) paid for and not downloaded: nothing was sent/,
            ),
            hint: expect.stringContaining(
              'Finish that run first, whose answers are new: enrich contacts a.csv',
            ),
          });
        expect(charged()).toBe(10);
        // The same the other way round: an unfinished --refresh run, then the plain command.
        const fresh = await run(input, 'o3.csv', { refresh: true, wait: false, restart: true });
        expect([fresh.written, charged()]).toEqual([false, 20]);
        const collected = await run(input, 'o1.csv');
        expect([collected.resumed, collected.written, charged()]).toEqual([true, true, 20]);
        await expect(run(input, 'o4.csv')).resolves.toMatchObject({ resumed: true });
        await expect(run(input, 'o2.csv', { cache: false })).rejects.toMatchObject({
          message: expect.stringMatching(/with refresh left 1 job/),
        });
        expect(charged()).toBe(20);
        const done = await run(input, 'o3.csv', { refresh: true });
        expect([done.resumed, done.written, charged()]).toEqual([true, true, 20]);
        // Nothing left to download: --no-cache runs, and pays, as asked.
        const own = await run(input, 'o2.csv', { cache: false });
        expect([own.exitCode, charged()]).toEqual([0, 30]);
      },
    );
  });

  describe('a --refresh run that ran out of credits is resumed after a', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a --refresh run that ran out of credits is resumed after a top-up: it pays only for the rows left ($name)',
      async ({ specOnly }, ctx) => {
        const { s, dir, run, charged } = await rig(ctx, { specOnly, credits: 6 });
        const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
        const short = await run(input, 'o1.csv', { refresh: true });
        expect([short.exitCode, charged()]).toEqual([5, 6]);
        s.admin.updateAccount(s.accountId, { credits: 100 });
        const rest = await run(input, 'o1.csv', { refresh: true });
        expect([rest.exitCode, rest.resumed, charged()]).toEqual([0, true, 10]);
      },
    );
  });

  it('--no-cache neither reads nor writes: the cache directory stays empty', async (ctx) => {
    const { dir, run, charged } = await rig(ctx);
    const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
    await run(input, 'o1.csv', { cache: false });
    await run(input, 'o2.csv', { cache: false, restart: true });
    expect(charged()).toBe(20);
    expect(await readdir(join(dir, 'cache')).catch(() => [])).toEqual([]);
  });

  it('a corrupt cache file is a warning, and the run goes on (and pays) without it', async (ctx) => {
    const { dir, run, charged, warnings } = await rig(ctx);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'cache'), { recursive: true });
    await writeFile(join(dir, 'cache', CACHE_FILE), Buffer.alloc(64 * 1024, 0x5a));
    const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(10));
    const summary = await run(input, 'o1.csv');
    expect(summary.exitCode).toBe(0);
    expect(summary.statuses.enriched).toBe(10);
    expect(charged()).toBe(10);
    expect(warnings.join('\n')).toMatch(/results cache .* cannot be used/);
  });

  it('after 30 runs the state directory holds only what the retention rule keeps', async (ctx) => {
    const { dir, run } = await rig(ctx);
    const runs = join(dir, 'runs');
    for (let i = 0; i < 30; i++) {
      const rows = contactRows(3).map((r) => [...r.slice(0, 5), `night ${i}`]);
      const input = await writeCsv(dir, `night-${i}.csv`, CONTACT_HEADER, rows);
      // A retention of 0: every finished run before this one is past it.
      await run(input, `out-${i}.csv`, { runRetentionMs: 0 });
    }
    expect(await readdir(runs)).toHaveLength(1);
    // With the default (7 days) finished runs stay, for `enrich jobs` and re-runs.
    for (let i = 0; i < 3; i++) {
      const input = await writeCsv(dir, `day-${i}.csv`, CONTACT_HEADER, contactRows(2 + i));
      await run(input, `day-${i}.csv.out.csv`);
    }
    expect(await readdir(runs)).toHaveLength(4);
  });

  it.skipIf(process.platform === 'win32')(
    'the cache is private (0600 files in a 0700 directory), in a directory made before, and repaired when it was not',
    async (ctx) => {
      // Regression: lmdb created the file and its -lock 0644, and an existing 0755 directory
      // stayed so: other local users could read every enriched contact.
      const { chmod, mkdir, stat } = await import('node:fs/promises');
      const { dir, run, warnings } = await rig(ctx);
      const cache = join(dir, 'cache');
      await mkdir(cache);
      await chmod(cache, 0o755); // `mkdir -p` under a 022 umask, or an admin-made directory
      const modes = async () => {
        const names = (await readdir(cache)).sort();
        const of = async (p: string) => ((await stat(p)).mode & 0o777).toString(8);
        return [await of(cache), ...(await Promise.all(names.map((n) => of(join(cache, n)))))];
      };
      const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(3));
      expect((await run(input, 'o1.csv')).exitCode).toBe(0);
      expect(await readdir(cache)).toEqual(
        expect.arrayContaining([CACHE_FILE, `${CACHE_FILE}-lock`]),
      );
      expect(await modes()).toEqual(['700', '600', '600']);
      expect(warnings).toEqual([`fixed permissions of ${cache}: mode 755 -> 700`]);
      // A cache an earlier version left readable is repaired before it is opened.
      await chmod(join(cache, CACHE_FILE), 0o644);
      await chmod(join(cache, `${CACHE_FILE}-lock`), 0o644);
      await chmod(cache, 0o755);
      warnings.length = 0;
      const again = await run(input, 'o2.csv', { restart: true });
      expect(again.cacheHits).toBe(3);
      expect(await modes()).toEqual(['700', '600', '600']);
      expect(warnings.sort()).toEqual(
        [
          `fixed permissions of ${join(cache, CACHE_FILE)}: mode 644 -> 600`,
          `fixed permissions of ${join(cache, `${CACHE_FILE}-lock`)}: mode 644 -> 600`,
          `fixed permissions of ${cache}: mode 755 -> 700`,
        ].sort(),
      );
    },
  );

  it('clearing the cache leaves no contact data in its directory', async (ctx) => {
    const { dir, run } = await rig(ctx);
    const input = await writeCsv(dir, 'a.csv', CONTACT_HEADER, contactRows(5));
    await run(input, 'o1.csv');
    const store = openResultsCache(join(dir, 'cache'));
    expect(store?.stats().entries).toBe(5);
    await store?.close();
    await clearCache(join(dir, 'cache'));
    expect(await readdir(join(dir, 'cache'))).toEqual([]);
  });
});
