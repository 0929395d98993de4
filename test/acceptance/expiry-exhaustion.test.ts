import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { filesContaining, recordFigure } from './figures.js';

beforeAll(ensureBuilt, 120_000);

let sb: SandboxHandle | undefined;
const written: { dirs: string[]; keys: string[] } = { dirs: [], keys: [] };
afterEach(async () => {
  // The keys used are in none of the files the runs wrote (journal, spools, output).
  for (const key of written.keys) expect(filesContaining(written.dirs, key)).toEqual([]);
  written.dirs = [];
  written.keys = [];
  await sb?.close();
  sb = undefined;
});

const statuses = (csv: string) => {
  const rows = parseCsv(csv);
  const i = (rows[0] as string[]).indexOf('enrich_status');
  const e = (rows[0] as string[]).indexOf('enrich_error');
  return rows.slice(1).map((r) => [r[i] as string, r[e] as string] as const);
};
const count = (s: (readonly [string, string])[], status: string) =>
  s.filter(([x]) => x === status).length;

/** A temp config/state and input for a CLI run against sandbox `s`; every file it writes is scanned for the key. */
async function cliRun(s: SandboxHandle, rows: string[][], apiKey = s.apiKey) {
  const env: Record<string, string> = {
    ...(await tempEnv()),
    ENRICH_BASE_URL: s.url,
    ENRICH_API_KEY: apiKey,
  };
  const dir = await tempDir();
  written.dirs.push(env.ENRICH_STATE_DIR as string, dir);
  written.keys.push(env.ENRICH_API_KEY as string);
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
  return { env, dir, file, out: join(dir, 'out.csv') };
}

describe('expiry and exhaustion through the CLI (acceptance)', () => {
  it('credits running out mid-run: exit 5, enriched rows kept, the rest failed with the reason; topped up, the same command finishes without paying twice', async () => {
    const s = (sb = await startSandbox({ port: 0, credits: 150 }));
    const { env, file, out } = await cliRun(s, contactRows(500, { invalidEvery: 50 }));
    const args = ['contacts', file, '-o', out, '--batch-size', '100', '--concurrency', '1'];
    const first = await runCli(args, { env });
    expect(first.code).toBe(5);
    expect(first.stderr).toMatch(/credits/i);
    const a = statuses(await readFile(out, 'utf8'));
    expect(a).toHaveLength(500);
    expect(count(a, 'enriched')).toBe(150);
    expect(count(a, 'invalid')).toBe(10);
    expect(count(a, 'failed')).toBe(340);
    expect(a.filter(([x]) => x === 'failed').every(([, e]) => /credit/i.test(e))).toBe(true);
    expect(s.admin.stats().credits_charged).toBe(150);

    // Re-running without more credits pays nothing more: the rows that ran out are tried
    // again and run out again.
    const second = await runCli(args, { env });
    expect(second.code).toBe(5);
    const b = statuses(await readFile(out, 'utf8'));
    expect([count(b, 'enriched'), count(b, 'invalid'), count(b, 'failed')]).toEqual([150, 10, 340]);
    expect(b.filter(([x]) => x === 'failed').every(([, e]) => /credit/i.test(e))).toBe(true);
    expect(s.admin.stats().credits_charged).toBe(150);

    // Topped up, the same command finishes: only the rows not yet enriched are sent.
    s.admin.updateAccount(s.accountId, { credits: 10_000 });
    const third = await runCli(args, { env });
    expect(third.code).toBe(0);
    const c = statuses(await readFile(out, 'utf8'));
    expect(count(c, 'enriched')).toBe(490);
    expect(count(c, 'invalid')).toBe(10);
    const stats = s.admin.stats();
    expect(stats.credits_charged).toBe(490);
    // Once a row is enriched it is never sent again.
    const fourth = await runCli(args, { env });
    expect(fourth.code).toBe(0);
    expect(s.admin.stats().records_submitted).toBe(stats.records_submitted);
    recordFigure('exhaustion', {
      rows: 500,
      first_exit: first.code,
      enriched_kept: 150,
      second_exit: second.code,
      third_exit: third.code,
      records_submitted: stats.records_submitted,
      credits: stats.credits_charged,
      jobs: stats.jobs_submitted,
    });
  });

  it('results expiring before download: rows expired, exit 3, output written; --restart buys them again', async () => {
    // The sandbox's clock runs ten minutes behind the CLI's: its deletions then come past
    // expiration_date plus the skew margin for the CLI too (a 404 earlier is not expiry).
    const now = () => Date.now() - 600_000;
    const s = (sb = await startSandbox({ port: 0, jobMs: 1_000, ttlMs: 2_000, now }));
    const { env, file, out } = await cliRun(s, contactRows(60, { invalidEvery: 20 }));
    const args = ['contacts', file, '-o', out, '--batch-size', '20'];
    const submitted = await runCli([...args, '--no-wait'], { env });
    expect(submitted.code).toBe(0);
    expect(s.admin.stats().jobs_submitted).toBe(3);
    s.admin.advanceClock(60_000); // the jobs finished and their results were deleted
    const late = await runCli(args, { env });
    expect(late.code).toBe(3);
    const a = statuses(await readFile(out, 'utf8'));
    expect(count(a, 'expired')).toBe(57);
    expect(count(a, 'invalid')).toBe(3);
    expect(a.find(([x]) => x === 'expired')?.[1]).toMatch(/expired before they were downloaded/);
    expect(s.admin.stats().jobs_submitted).toBe(3);
    const again = await runCli([...args, '--restart'], { env });
    expect(again.code).toBe(0);
    expect(count(statuses(await readFile(out, 'utf8')), 'enriched')).toBe(57);
  });

  it('a key revoked mid-run: exit 4, enriched rows kept; a new key of the same account resumes the run, paying for no row twice', async () => {
    const s = (sb = await startSandbox({ port: 0, faults: { latency_ms: 20 } }));
    const key = s.admin.createKey({ name: 'cron' });
    const { env, file, out } = await cliRun(s, contactRows(200), key.api_key);
    const args = ['contacts', file, '-o', out, '--batch-size', '20', '--concurrency', '1'];
    const { spawn } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((r) => child.on('close', r));
    // Revoke once some results were downloaded and more jobs are still to come.
    const downloads = () =>
      s.admin.stats().requests_by_path['/contacts/results/{job_id}.json'] ?? 0;
    while (downloads() < 3) await new Promise((r) => setTimeout(r, 2));
    s.admin.revokeKey(key.id);
    expect(await closed).toBe(4);
    expect(stderr).not.toMatch(/^\s+at /m);
    const a = statuses(await readFile(out, 'utf8'));
    expect(a).toHaveLength(200);
    const kept = count(a, 'enriched');
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(200);
    expect(count(a, 'failed')).toBe(200 - kept);
    const fresh = s.admin.createKey({ account_id: s.accountId });
    written.keys.push(fresh.api_key);
    const again = await runCli(args, { env: { ...env, ENRICH_API_KEY: fresh.api_key } });
    expect(again.code).toBe(0);
    expect(count(statuses(await readFile(out, 'utf8')), 'enriched')).toBe(200);
    // The new key is of the same account (a rotated key): the service shows it the revoked
    // key's jobs, so its run takes that run over (adopt-run.ts): the jobs paid and not
    // downloaded are downloaded, the batches refused with 401 are sent: every row paid once.
    const charged = s.admin.stats().credits_charged;
    expect(charged).toBe(200);
    recordFigure('revoked', {
      rows: 200,
      enriched_before_revocation: kept,
      jobs: s.admin.stats().jobs_submitted,
    });
  });
});
