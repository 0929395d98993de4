import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  sandboxForTest,
  tempDir,
  writeCsv,
  type TestEnd,
} from '../integration/bulk-harness.js';
import { mapLimit } from '../helpers/map-limit.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The tests run two at a time (`describe.concurrent`, at most 2 at once: each spends about a
 * second of its CLI runs waiting on a job's poll, and more at once only share the CPU): each has
 * its own sandbox (closed when it ends), config, state and cache dirs, and files.
 */
vi.setConfig({ maxConcurrency: 2 });

const fixtures = fileURLToPath(new URL('../../fixtures', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));

async function serviceEnv(s: SandboxHandle): Promise<Record<string, string>> {
  return { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
}

/** Starts the CLI and SIGKILLs it after `ms`, or lets it finish; resolves when it is gone. */
function runAndKill(
  args: string[],
  env: Record<string, string>,
  ms: number,
): Promise<number | null> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: 'ignore',
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
}

describe.concurrent('enrich contacts / companies (e2e)', () => {
  it('runs the README quick start on the embedded sandbox', async () => {
    const dir = await tempDir();
    const out = join(dir, 'enriched.csv');
    const r = await runCli(['contacts', join(fixtures, 'contacts.csv'), '--sandbox', '-o', out], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text.split('\n')[0]).toMatch(
      /^Contact ID,First Name,.*,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enriched_email,/,
    );
    expect(r.stderr).toMatch(/rows: 25\s+enriched: 23\s+not found: 0\s+failed: 0\s+invalid: 2/);
    expect(r.stdout).toBe('');
  });

  it('reads stdin and writes stdout; the summary goes to stderr', async () => {
    const input = 'email,name\njane@acme.com,Jane Doe\n,Solo\n';
    const r = await runCli(['contacts', '-', '--sandbox', '--format', 'jsonl'], {
      env: await tempEnv(),
      input,
    });
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.row, l.status])).toEqual([
      [1, 'enriched'],
      [2, 'invalid'],
    ]);
    expect(lines[0]?.input).toEqual({ email: 'jane@acme.com', name: 'Jane Doe' });
    expect(r.stderr).toMatch(/rows: 2 /);
  });

  it('prints a JSON summary with -o and --json, and lists, shows and fetches its jobs', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const env = await serviceEnv(s);
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(120, { dupEvery: 6 }));
    const r = await runCli(
      ['contacts', file, '-o', join(dir, 'out.json'), '--json', '--batch-size', '50'],
      { env },
    );
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      rows: 120,
      duplicates: 20,
      credits_charged: 100,
      exit_code: 0,
    });
    expect((summary.jobs as { ids: string[] }).ids).toHaveLength(2);

    const list = await runCli(['jobs', 'list', '--json'], { env });
    const jobs = JSON.parse(list.stdout) as { job_id: string; status: string; rows: number }[];
    expect(jobs.map((j) => [j.status, j.rows])).toEqual([
      ['done', 50],
      ['done', 50],
    ]);
    const id = jobs[0]?.job_id as string;
    // As a table, grouped by run: the run's start and input on its first job.
    const table = await runCli(['jobs', 'list', '--limit', '1'], { env });
    expect(table.stdout.split('\n')[0]).toMatch(/^RUN STARTED\s+INPUT\s+JOB\s+KIND/);
    expect(table.stdout).toContain(id);
    const show = await runCli(['jobs', 'show', id.slice(0, 8)], { env });
    expect(show.stdout).toContain(id);
    const fetched = join(dir, 'job.csv');
    const fetch = await runCli(['jobs', 'fetch', id, '-o', fetched], { env });
    expect(fetch.code).toBe(0);
    const csv = parseCsv(await readFile(fetched, 'utf8'));
    expect(csv[0]?.join(',')).toMatch(
      /^custom_fields,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,email,/,
    );
    expect(csv).toHaveLength(51);
    // What each record answers: the echo of what was sent, flattened as original_<field>.
    const emailAt = csv[0]?.indexOf('original_business_email') as number;
    expect(emailAt).toBeGreaterThan(0);
    expect(
      csv.slice(1).every((row) => /^person\d+@company\d+\.com$/.test(row[emailAt] ?? '')),
    ).toBe(true);
  });

  // Alone (`it.sequential`): its kill points already run two at a time.
  it.sequential(
    'survives SIGKILL at any point: re-running completes with the same output and no batch paid twice',
    async (t) => {
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(400, { dupEvery: 9 }));
      const args = (out: string) => [
        'contacts',
        file,
        '-o',
        out,
        '--batch-size',
        '20',
        // Jobs in flight: 20 jobs of >= 300 ms in 3 rounds, so a kill lands mid-run.
        '--concurrency',
        '8',
        '-q',
      ];

      const clean = await sandboxForTest(t, { port: 0 });
      const cleanOut = join(dir, 'clean.csv');
      expect((await runCli(args(cleanOut), { env: await serviceEnv(clean) })).code).toBe(0);
      const expected = await readFile(cleanOut, 'utf8');
      const batches = clean.admin.stats().jobs_submitted;

      // Kill points two at a time, each with its own sandbox, state and output directory
      // (the '.tmp' check reads that directory); every sandbox is closed when the test ends.
      const open = new Set<SandboxHandle>();
      let outcomes: boolean[];
      try {
        outcomes = await mapLimit([150, 350, 600, 900], 2, async (killAt) => {
          const s = await startSandbox({ port: 0, jobMs: 300, faults: { latency_ms: 15 } });
          open.add(s);
          const env = await serviceEnv(s);
          const outDir = join(dir, `k${killAt}`);
          await mkdir(outDir);
          const out = join(outDir, 'out.csv');
          const wasKilled = (await runAndKill(args(out), env, killAt)) === null;
          // Never a half-written output: either absent or complete, and no temp file left behind.
          if (existsSync(out)) expect(await readFile(out, 'utf8')).toBe(expected);
          let r = await runCli(args(out), { env });
          // Killed before an answer showed that this service honours Idempotency-Key: a batch
          // whose POST may have reached it waits for --resend-unconfirmed (same key: replayed).
          if (r.code === 3 && /never confirmed them/.test(r.stderr))
            r = await runCli([...args(out), '--resend-unconfirmed'], { env });
          expect(r.code).toBe(0);
          expect(await readFile(out, 'utf8')).toBe(expected);
          expect(s.admin.stats().jobs_submitted).toBe(batches);
          // A replayed Idempotency-Key is not a new job: count the POSTs (at most the 8 in flight again).
          expect(
            (s.admin.stats().requests_by_path['/contacts'] ?? 0) - batches,
          ).toBeLessThanOrEqual(8);
          expect(readdirSync(dirname(out)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
          open.delete(s);
          await s.close();
          return wasKilled;
        });
      } finally {
        await Promise.all([...open].map((s) => s.close()));
      }
      const killed = outcomes.filter(Boolean).length;
      // The kills landed mid-run (20 jobs of >= 300 ms each): a run that ended first would
      // only have tested a re-run of a finished job.
      expect(killed).toBeGreaterThanOrEqual(3);
    },
  );

  it.for(['SIGINT', 'SIGTERM'] as const)(
    '%s stops, keeps the journal, exits 130 and says how to resume',
    async (signal, t) => {
      const s = await sandboxForTest(t, { port: 0, jobMs: 60_000 });
      const env = await serviceEnv(s);
      const dir = await tempDir();
      const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(60));
      const child = spawn(
        process.execPath,
        [bin, 'contacts', file, '-o', join(dir, 'out.csv'), '--batch-size', '20'],
        {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      // Wait until every job is submitted (the run is then polling), then interrupt.
      while (s.admin.stats().jobs_submitted < 3) await new Promise((r) => setTimeout(r, 50));
      child.kill(signal);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(130);
      expect(stderr).toMatch(
        /Resume with:\n\s+enrich contacts .*in\.csv -o .*out\.csv --batch-size 20/,
      );
      s.admin.advanceClock(60_000);
      const again = await runCli(
        ['contacts', file, '-o', join(dir, 'out.csv'), '--batch-size', '20'],
        { env },
      );
      expect(again.code).toBe(0);
      expect(again.stderr).toMatch(/\(resumed\)/);
      expect(s.admin.stats().jobs_submitted).toBe(3);
    },
  );

  it('exits 4 without a key and 2 on a bad flag, before reading or sending anything', async () => {
    const env = await tempEnv();
    const noKey = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '--base-url', 'http://127.0.0.1:9'],
      { env },
    );
    expect(noKey.code).toBe(4);
    expect(noKey.stderr).toMatch(/enrich auth login.*--sandbox/s);
    const bad = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '--sandbox', '--batch-size', 'lots'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--batch-size: expected/);
  });

  it('refuses, before sending anything, an -o that is a directory, --no-wait with --sandbox, and --rejects - with stdout output', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const dir = await tempDir();
    const env = await serviceEnv(s);
    const input = join(fixtures, 'contacts.csv');
    const intoDir = await runCli(['contacts', input, '-o', dir], { env });
    expect(intoDir.code).toBe(2);
    expect(intoDir.stderr).toContain(`cannot write ${dir}: it is a directory`);
    const rejectsDir = await runCli(
      ['contacts', input, '-o', join(dir, 'out.csv'), '--rejects', dir],
      { env },
    );
    expect(rejectsDir.code).toBe(2);
    expect(s.admin.stats().jobs_submitted).toBe(0);
    const noWait = await runCli(['contacts', input, '--sandbox', '--no-wait'], {
      env: await tempEnv(),
    });
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toMatch(/--no-wait cannot be used with --sandbox/);
    const mixed = await runCli(['contacts', input, '--sandbox', '--rejects', '-'], {
      env: await tempEnv(),
    });
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/--rejects - and the output both go to stdout/);
    expect(mixed.stdout).toBe('');
  });

  it('a grown input pays only for its new rows, and says nothing about it with -q', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const dir = await tempDir();
    const env = await serviceEnv(s);
    const file = await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(30));
    const args = ['contacts', file, '-o', join(dir, 'out.csv'), '-q'];
    expect((await runCli(args, { env })).stderr).toBe('');
    await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(31));
    const r = await runCli(args, { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(s.admin.stats().credits_charged).toBe(31);
  });

  it('a run answered entirely from the results cache reports the last known balance, as auth status does (regression: remaining unknown)', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const dir = await tempDir();
    const env = await serviceEnv(s);
    const rows = contactRows(12);
    const first = await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows);
    const paid = await runCli(['contacts', first, '-o', join(dir, 'a-out.csv'), '--json'], { env });
    const { remaining_credits: left } = JSON.parse(paid.stdout) as { remaining_credits: number };
    expect(left).toBeGreaterThan(0);
    const copy = await writeCsv(dir, 'b.csv', CONTACT_HEADER, rows);
    const again = await runCli(['contacts', copy, '-o', join(dir, 'b-out.csv'), '--json'], { env });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      credits_charged: 0,
      cache: { hits: 12 },
      remaining_credits: left,
      remaining_credits_at: null,
    });
    const text = await runCli(['contacts', copy, '-o', join(dir, 'c-out.csv')], { env });
    expect(text.stderr).toContain(`remaining: ${left} `);
    const status = await runCli(['auth', 'status'], { env });
    expect(status.stdout).toMatch(new RegExp(`remaining_credits\\s+${left}\\b`));
    expect(s.admin.stats().credits_charged).toBe(12);
  });

  /**
   * 40 rows run with --no-cache (exit `firstCode`), `between` (a top-up), their job fetched with
   * `enrich jobs fetch`, then the same rows reversed in another file: that run's JSON summary.
   */
  async function fetchThenRunAgain(
    t: TestEnd,
    o: {
      credits?: number;
      firstCode: number;
      between?: (s: SandboxHandle) => void;
    },
  ) {
    const s = await sandboxForTest(t, { port: 0, ...(o.credits ? { credits: o.credits } : {}) });
    const dir = await tempDir();
    const env = await serviceEnv(s);
    const rows = contactRows(40);
    const file = await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows);
    // A run that keeps nothing in the cache itself.
    const run = ['contacts', file, '-o', join(dir, 'a-out.csv'), '-q', '--no-cache'];
    expect((await runCli(run, { env })).code).toBe(o.firstCode);
    const charged = s.admin.stats().credits_charged;
    o.between?.(s);
    const [job] = JSON.parse((await runCli(['jobs', 'list', '--json'], { env })).stdout) as {
      job_id: string;
    }[];
    const fetch = ['jobs', 'fetch', job!.job_id, '-o', join(dir, 'job.json')];
    expect((await runCli(fetch, { env })).code).toBe(0);
    const other = await writeCsv(dir, 'b.csv', CONTACT_HEADER, [...rows].reverse());
    const again = await runCli(['contacts', other, '-o', join(dir, 'b-out.csv'), '--json'], {
      env,
    });
    expect(again.code).toBe(0);
    return { s, charged, summary: JSON.parse(again.stdout) as Record<string, unknown> };
  }

  it("jobs fetch keeps a journaled job's answers in the results cache: the same rows in another file cost nothing", async (t) => {
    const { s, charged, summary } = await fetchThenRunAgain(t, { firstCode: 0 });
    expect(charged).toBe(40);
    expect(summary).toMatchObject({ credits_charged: 0, cache: { hits: 40 } });
    expect(s.admin.stats().credits_charged).toBe(40);
  });

  it('jobs fetch after a top-up keeps no row its job skipped for credits as a no-match: the same rows in another file are sent again, and only those', async (t) => {
    const { s, charged, summary } = await fetchThenRunAgain(t, {
      credits: 25,
      firstCode: 5,
      // Topped up: the answer fetched now says 1,000 credits left, not what the job ran with.
      between: (box) => box.admin.updateAccount(box.accountId, { credits: 1000 }),
    });
    expect(charged).toBe(25);
    expect(summary).toMatchObject({ credits_charged: 15, cache: { hits: 25 } });
    expect(s.admin.stats().credits_charged).toBe(40);
  });

  it('-q still says on stderr why a run stopped early (cron reads nothing else)', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const dir = await tempDir();
    const env = { ...(await serviceEnv(s)), ENRICH_API_KEY: 'sk_test_not_a_real_key_000000' };
    const r = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '-o', join(dir, 'out.csv'), '-q'],
      { env },
    );
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^enrich: stopped early: .+ \[AUTH_INVALID\]$/m);
    expect(r.stderr).not.toMatch(/rows: /); // the summary itself stays quiet
  });

  it("-q still warns of rows a job's answer left out: sent, maybe charged, no data (regression: silent, exit 0)", async (t) => {
    const s = await sandboxForTest(t, { port: 0, faults: { drop_records: 0.5 } });
    const dir = await tempDir();
    const file = await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(40));
    const r = await runCli(['contacts', file, '-o', join(dir, 'out.csv'), '-q'], {
      env: await serviceEnv(s),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^enrich: warning: \d+ row\(s\) were left out of their job's answer \("missing"\): sent, no data came back, and they may have been charged$/m,
    );
  });

  it('says expired rows need --restart, not a resume that would change nothing', async (t) => {
    // Expired ten minutes ago by the run's clock: a 404 counts as expiry only past the
    // expiration_date plus a margin for clock skew.
    const now = () => Date.now() - 600_000;
    const s = await sandboxForTest(t, { port: 0, jobMs: 0, ttlMs: 1, now });
    const dir = await tempDir();
    const r = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '-o', join(dir, 'out.csv'), '-q'],
      { env: await serviceEnv(s) },
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/enrich: 23 row\(s\) expired: .* --restart runs the whole file again/);
    expect(r.stderr).not.toMatch(/resume.* with:/);
  });

  it('takes batch size from the config file unless the flag says otherwise', async () => {
    const env = await tempEnv();
    expect((await runCli(['config', 'set', 'batch_size', '10'], { env })).code).toBe(0);
    const plan = async (...extra: string[]) =>
      JSON.parse(
        (
          await runCli(
            ['contacts', join(fixtures, 'contacts.csv'), '--dry-run', '--json', ...extra],
            { env },
          )
        ).stdout,
      ) as {
        batches: number;
      };
    expect((await plan()).batches).toBe(3);
    expect((await plan('--batch-size', '100')).batches).toBe(1);
    expect((await plan()).batches).toBe(3);
  });

  it('a bulk run never loads zod (its bodies pass the hand-written checks); a single lookup does', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const dir = await tempDir();
    const hook = fileURLToPath(new URL('../helpers/record-modules.mjs', import.meta.url));
    const modulesOf = async (args: string[], name: string) => {
      const list = join(dir, `${name}.txt`);
      const env = {
        ...(await serviceEnv(s)),
        NODE_OPTIONS: `--import=${hook}`,
        ENRICH_TEST_MODULES_OUT: list,
      };
      const r = await runCli(args, { env });
      expect(r.code, r.stderr).toBe(0);
      return (await readFile(list, 'utf8')).split('\n');
    };
    const zod = (url: string) => url.includes('/node_modules/zod/');
    const bulk = await modulesOf(
      ['contacts', join(fixtures, 'contacts.csv'), '-o', join(dir, 'out.csv')],
      'bulk',
    );
    expect(bulk.some((u) => u.endsWith('/dist/pipeline/run/run.js'))).toBe(true);
    expect(bulk.filter(zod)).toEqual([]);
    // The recording sees zod when it is loaded: the single lookup checks its answer with it.
    const single = await modulesOf(['contact', '--email', 'ada@example.com'], 'single');
    expect(single.some(zod)).toBe(true);
  });

  it('--timeout: exit 3, the output written, and the resume command with the time to run it by', async (t) => {
    const s = await sandboxForTest(t, { port: 0, jobMs: 60_000 });
    const env = await serviceEnv(s);
    const dir = await tempDir();
    const out = join(dir, 'out.csv');
    const r = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '-o', out, '--timeout', '500ms'],
      { env },
    );
    expect(r.code).toBe(3);
    expect(existsSync(out)).toBe(true);
    const by =
      /resume before (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ), when the first job's results expire with:\n {2}enrich contacts /;
    const m = by.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    // The sandbox's default time to live is a day: the time given is the job's own expiry.
    expect(Date.parse(m![1]!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(await readFile(out, 'utf8')).toContain('still running at --timeout');
  });

  it('writes --rejects in a real run, and --no-wait --json prints the jobs then finishes later', async (t) => {
    const s = await sandboxForTest(t, { port: 0, jobMs: 60_000 });
    const env = await serviceEnv(s);
    const dir = await tempDir();
    const out = join(dir, 'out.csv');
    const rejects = join(dir, 'rejects.csv');
    const args = [
      'contacts',
      join(fixtures, 'contacts.csv'),
      '-o',
      out,
      '--rejects',
      rejects,
      '--no-wait',
    ];
    const first = await runCli([...args, '--json'], { env });
    expect(first.code).toBe(0);
    const submitted = JSON.parse(first.stdout) as {
      jobs: string[];
      pending: number;
      resume: string;
      resume_before: string;
    };
    expect(submitted.jobs).toHaveLength(1);
    expect(submitted.pending).toBe(1);
    expect(submitted.resume).toContain('--no-wait');
    // The job's expiry, as the service gave it: the re-run must come before it.
    const expiry = Date.parse(submitted.resume_before);
    expect(expiry).toBeGreaterThan(Date.now());
    const again = await runCli(args, { env });
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(submitted.jobs[0]);
    expect(again.stderr).toContain(
      `to fetch the results, run the same command again before ${new Date(expiry).toISOString().replace(/\.000Z$/, 'Z')}, when the first job's results expire:\n`,
    );
    expect(existsSync(out)).toBe(false);
    s.admin.advanceClock(60_000);
    const second = await runCli(args, { env });
    expect(second.code).toBe(0);
    expect(existsSync(out)).toBe(true);
    const lines = (await readFile(rejects, 'utf8')).trim().split('\n');
    expect(lines[0]).toMatch(
      /,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enrich_line$/,
    );
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/,invalid,needs at least one of: .*,,,\d+$/);
    expect(s.admin.stats().jobs_submitted).toBe(1);
  });
});
