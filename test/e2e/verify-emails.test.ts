import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import {
  parseCsv,
  sandboxForTest,
  tempDir,
  writeCsv,
  type TestEnd,
} from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The tests of a describe run two at a time (`describe.concurrent`, at most 2 at once: more
 * only share the CPU): each has its own sandbox (closed when it ends), config, state and cache
 * dirs, and files; none shares an account, credits or a counter with another.
 */
vi.setConfig({ maxConcurrency: 2 });

/**
 * A sandbox in this process for one test, the env that points the CLI at it (its key, fresh
 * dirs), and the verification credits it has charged so far.
 */
async function service(t: TestEnd, o: SandboxOptions = {}) {
  const s = await sandboxForTest(t, { port: 0, ...o });
  return {
    s,
    env: { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey },
    charged: () => s.admin.stats().verification_credits_charged,
  };
}

/** `n` distinct addresses (all valid, all charged by the sandbox), and one duplicate of the first. */
async function list(n: number): Promise<{ file: string; dir: string }> {
  const dir = await tempDir('enrich-verify-e2e-');
  const rows = Array.from({ length: n }, (_, i) => [`${i}`, `lead${i}@firm${i % 13}.com`]);
  rows.push([`${n}`, 'lead0@FIRM0.com']);
  return { file: await writeCsv(dir, 'list.csv', ['Id', 'Email'], rows), dir };
}

/** Starts the CLI, waits until the sandbox has charged `credits` (`charged()`), then sends it `signal`. */
async function stopAfter(
  args: string[],
  env: Record<string, string>,
  charged: () => number,
  credits: number,
  signal: NodeJS.Signals,
) {
  const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<number | null>((r) => child.on('close', r));
  while (charged() < credits) await new Promise((r) => setTimeout(r, 5));
  child.kill(signal);
  return { code: await closed, stderr: () => stderr };
}

describe.concurrent('enrich verify-emails (CLI)', () => {
  it('--help shows examples and exit codes', async () => {
    const r = await runCli(['verify-emails', '--help'], { env: await tempEnv() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Examples:\n\s+\$ enrich verify-emails leads.csv --dry-run/);
    expect(r.stdout).toMatch(/5 verification credits exhausted/);
  });

  it('--dry-run names the column and the worst case, sending nothing', async () => {
    const r = await runCli(['verify-emails', 'fixtures/contacts.csv', '--dry-run', '--sandbox'], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^email column: "Email"$/m);
    expect(r.stdout).toMatch(/^worst case: \d+ verification credit\(s\)$/m);
  });

  it('--dry-run --max-credits says how many addresses it sends and how many rows it leaves unsent', async () => {
    const { file } = await list(30);
    const env = await tempEnv();
    const r = await runCli(['verify-emails', file, '--dry-run', '--max-credits', '10'], { env });
    expect(r.code).toBe(0);
    // 30 distinct addresses, the first repeated: 10 sent (the first among them); 20 rows left.
    expect(r.stdout).toMatch(
      /^distinct addresses: 30 {2}duplicates: 1 {2}cached: 0 {2}to send: 10$/m,
    );
    expect(r.stdout).toMatch(
      /^--max-credits 10: 20 row\(s\) not sent \(they end "failed", exit 5\)$/m,
    );
    expect(r.stdout).toMatch(/^worst case: 10 verification credit\(s\)$/m);
    const j = await runCli(['verify-emails', file, '--dry-run', '--max-credits', '10', '--json'], {
      env,
    });
    expect(JSON.parse(j.stdout)).toMatchObject({
      addresses: 30,
      sent: 10,
      over_budget: 20,
      max_credits: 10,
    });
  });

  it('verifies a file, prints the JSON summary, and the single verify-email then answers from the same cache', async (t) => {
    const { env, charged } = await service(t);
    const { file, dir } = await list(30);
    const out = join(dir, 'out.csv');
    const r = await runCli(['verify-emails', file, '-o', out, '--json', '--no-progress'], { env });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ rows: 31, addresses: 30, duplicates: 1, sent: 30 });
    expect(summary.credits_charged).toBe(30);
    expect(charged()).toBe(30);
    const rows = parseCsv(await readFile(out, 'utf8'));
    expect(rows[0]).toEqual([
      'Id',
      'Email',
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'verify_status',
      'verify_credit_charged',
    ]);
    const single = await runCli(['verify-email', 'lead3@FIRM3.com'], { env });
    expect(single.code).toBe(0);
    expect(single.stdout.split('\n')[0]).toBe('valid');
    expect(single.stderr).toMatch(/answered from the results cache/);
    expect(charged()).toBe(30);
  });

  it('a run answered entirely from the results cache reports the last known verification balance, not the enrichment one (regression: remaining unknown)', async (t) => {
    const { s, env } = await service(t, { credits: 5000, verificationCredits: 700 });
    const { file, dir } = await list(12);
    const paid = await runCli(['verify-emails', file, '-o', join(dir, 'a.csv'), '--json'], { env });
    const { remaining_credits: left } = JSON.parse(paid.stdout) as { remaining_credits: number };
    expect(left).toBe(688);
    // An enrichment answer makes the memo hold the other balance too: it must not be shown.
    expect((await runCli(['contact', '--email', 'jane@acme.com'], { env })).code).toBe(0);
    const copy = await writeCsv(
      dir,
      'copy.csv',
      ['Email'],
      [['lead5@firm5.com'], ['lead0@firm0.com']],
    );
    const again = await runCli(['verify-emails', copy, '-o', join(dir, 'b.csv'), '--json'], {
      env,
    });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      sent: 0,
      cache: { hits: 2 },
      remaining_credits: 688,
    });
    const text = await runCli(['verify-emails', copy, '-o', join(dir, 'c.csv')], { env });
    expect(text.stderr).toContain('remaining: 688 ');
    expect(s.admin.stats().verification_credits_charged).toBe(12);
  });

  it.for([
    ['default', false],
    ['--spec-only', true],
  ] as const)(
    'out of verification credits mid-file (%s): exit 5, and after a top-up the same command verifies only the rest',
    async ([, specOnly], t) => {
      const { s, env, charged } = await service(t, { verificationCredits: 12, specOnly });
      const { file, dir } = await list(40);
      const args = ['verify-emails', file, '-o', join(dir, 'out.csv'), '--concurrency', '3'];
      const first = await runCli(args, { env });
      expect(first.code).toBe(5);
      expect(first.stderr).toMatch(/after a top-up, run the same command again/);
      expect(charged()).toBe(12);
      s.admin.updateAccount(s.accountId, { verification_credits: 100 });
      const second = await runCli(args, { env });
      expect(second.code).toBe(0);
      expect(charged()).toBe(40);
      const rows = parseCsv(await readFile(join(dir, 'out.csv'), 'utf8'));
      expect(rows.slice(1).every((r) => r[2] === 'enriched' && r[6] === 'valid')).toBe(true);
      // --max-credits reached needs no top-up (regression: its hint said one did).
      const more = await list(50);
      const capped = await runCli(
        ['verify-emails', more.file, '-o', join(more.dir, 'o.csv'), '--max-credits', '3'],
        { env },
      );
      expect(capped.code).toBe(5);
      expect(capped.stderr).toMatch(/not verified; run the same command again/);
      expect(capped.stderr).not.toMatch(/top-up/);
    },
  );

  it.for([
    ['default', false],
    ['--spec-only', true],
  ] as const)(
    'SIGKILL mid-run (%s): the same command again verifies nothing twice and finishes the rest',
    async ([, specOnly], t) => {
      const { env, charged } = await service(t, { specOnly, faults: { latency_ms: 15 } });
      const { file, dir } = await list(120);
      const args = ['verify-emails', file, '-o', join(dir, 'out.csv'), '--concurrency', '4', '-q'];
      await stopAfter(args, env, charged, 30, 'SIGKILL');
      const atKill = charged();
      expect(atKill).toBeLessThan(120);

      const again = await runCli(args, { env });
      // Requests in flight at the kill may have been charged: they are not sent again.
      const rows = parseCsv(await readFile(join(dir, 'out.csv'), 'utf8')).slice(1);
      const lost = rows.filter((r) => r[7] === 'unknown').length;
      expect(again.code).toBe(lost > 0 ? 3 : 0);
      expect(lost).toBeLessThanOrEqual(4);
      expect(rows.filter((r) => r[2] === 'enriched').length).toBe(121 - lost);
      // Nothing answered before the kill was verified again.
      expect(charged()).toBeLessThanOrEqual(120);
      expect(charged()).toBeGreaterThanOrEqual(120 - lost);
    },
  );

  it('Ctrl-C mid-run: stops sending, exits 130 saying how to resume; the same command pays only for the rest', async (t) => {
    const { env, charged } = await service(t, { faults: { latency_ms: 15 } });
    const { file, dir } = await list(100);
    const args = ['verify-emails', file, '-o', join(dir, 'out.csv'), '--concurrency', '2'];
    const stopped = await stopAfter(args, env, charged, 10, 'SIGINT');
    expect(stopped.code).toBe(130);
    expect(stopped.stderr()).toMatch(/Resume with:\n\s+enrich verify-emails /);
    expect(charged()).toBeLessThan(100);
    const again = await runCli(args, { env });
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/answered by an earlier attempt of this run: \d+/);
    expect(charged()).toBe(100);
  });
});

describe.concurrent('enrich verify-emails: progress on stderr off a terminal (CLI)', () => {
  // Answers take 20 ms, two at a time: the 61 addresses take about 0.6 s.
  const LINE =
    /^enrich: verifying: \d[\d,]* rows(, \d[\d,]* written)?, addresses \d+\/\d+, sent \d+, credits \d+, \d[\w. ]*(, \d+% done)?(, about \d[\w ]* left)?$/;

  async function run(t: TestEnd, flags: string[]) {
    const { env } = await service(t, { faults: { latency_ms: 20 } });
    const { file, dir } = await list(60);
    const out = join(dir, 'out.csv');
    const r = await runCli(['verify-emails', file, '-o', out, '--concurrency', '2', ...flags], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(parseCsv(await readFile(out, 'utf8'))).toHaveLength(62);
    return { ...r, lines: r.stderr.split('\n').filter((l) => l !== '') };
  }

  it('prints plain progress lines (no spinner, no escapes) in the bulk commands’ words, then the summary as before', async (t) => {
    const { lines, stdout } = await run(t, []);
    expect(stdout).toBe('');
    const progress = lines.filter((l) => l.startsWith('enrich: '));
    // The first report prints at once; later ones at most every 5 s.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const l of progress) expect(l).toMatch(LINE);
    expect(lines.join('\n')).not.toContain('\u001B');
    const summary = lines.findIndex((l) => l.startsWith('rows: 61  valid: 61 '));
    expect(summary).toBeGreaterThan(lines.indexOf(progress[0]!));
    expect(lines[summary + 1]).toMatch(
      /^addresses: 60 distinct {2}duplicates sent once: 1 {2}sent: 60 {2}credits charged: 60 {2}remaining: \d+ {2}time: /,
    );
  });

  it('prints nothing on stderr with --quiet, and the summary alone with --no-progress', async (t) => {
    expect((await run(t, ['--quiet'])).stderr).toBe('');
    const { lines } = await run(t, ['--no-progress']);
    expect(lines.filter((l) => l.startsWith('enrich: '))).toEqual([]);
    expect(lines[0]).toMatch(/^rows: 61 /);
  });
});
