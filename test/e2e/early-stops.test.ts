import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The cases of a describe run two at a time (`describe.concurrent`, at most 2 at once: more only
 * share the CPU): each has its own sandbox (closed when it ends), config, state and cache dirs,
 * and files.
 */
vi.setConfig({ maxConcurrency: 2 });

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));

async function serviceEnv(s: SandboxHandle): Promise<Record<string, string>> {
  return { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
}

/** The run's input and output in a fresh directory. */
async function files(rows: number): Promise<{ dir: string; file: string; out: string }> {
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(rows));
  return { dir, file, out: join(dir, 'out.csv') };
}

describe.concurrent('every early stop prints the command that resumes (e2e)', () => {
  it('--max-credits reached: exit 5, and the same command sends the next rows', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const env = await serviceEnv(s);
    const { file, out } = await files(10);
    const args = ['contacts', file, '-o', out, '--max-credits', '4', '--quiet'];
    const r = await runCli(args, { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(
      /--max-credits 4 reached: the rows not sent end "failed" \(not sent\)\. .*run the same command again to send the next rows.*:\n {2}enrich contacts .*in\.csv -o .*out\.csv --max-credits 4 --quiet\n/,
    );
    expect(s.admin.stats().credits_charged).toBe(4);
    const again = await runCli(args, { env });
    expect(again.code).toBe(5);
    expect(s.admin.stats().credits_charged).toBe(8);
  });

  it('the account out of credits: exit 5 and the command to run after a top-up', async (t) => {
    const s = await sandboxForTest(t, { port: 0, credits: 3 });
    const { file, out } = await files(10);
    const r = await runCli(['contacts', file, '-o', out], { env: await serviceEnv(s) });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(
      /the account ran out of credits; .*After a top-up, the same command sends only the rows that came back "out of credits":\n {2}enrich contacts .*in\.csv -o .*out\.csv\n/,
    );
  });

  it('the service out of reach: exit 6 and the command to resume once it answers', async () => {
    const { file, out } = await files(3);
    const env = { ...(await tempEnv()), ENRICH_API_KEY: 'sk_test_x' };
    const args = ['contacts', file, '-o', out, '--base-url', 'http://127.0.0.1:9'];
    const r = await runCli([...args, '--timeout', '1s'], { env });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(
      /the journal is saved\. Once it answers again, resume with:\n {2}enrich contacts .*--base-url http:\/\/127\.0\.0\.1:9 --timeout 1s\n/,
    );
  }, 20_000);

  it('submissions refused for a day (a quota, Retry-After past --timeout): a warning at once saying why and until when, the job it has downloaded, exit 3 and the command to resume', async (t) => {
    const s = await sandboxForTest(t, { port: 0, jobMs: 200, maxJobsPerAccount: 1 });
    const { file, out } = await files(10);
    const args = ['contacts', file, '-o', out, '--batch-size', '5', '--quiet'];
    const r = await runCli(args, { env: await serviceEnv(s) });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(
      /^enrich: warning: POST \/contacts: 429 Too Many Requests: .*; the service asks to wait 2\dh \d\dm \(until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\), longer than this command may wait \(--timeout\): nothing more is sent to it now; run the same command after \d{4}-/m,
    );
    expect(r.stderr).toMatch(
      /some rows are not done; resume with:\n {2}enrich contacts .*--quiet\n/,
    );
    expect(s.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 5 });
    expect((await readFile(out, 'utf8')).match(/,enriched,/g)).toHaveLength(5);
  });

  it('a second Ctrl-C leaves at once with exit 130, the resume command, and no .tmp left', async (t) => {
    const s = await sandboxForTest(t, { port: 0, jobMs: 60_000 });
    const env = await serviceEnv(s);
    const { dir, file, out } = await files(40);
    const child = spawn(
      process.execPath,
      [bin, 'contacts', file, '-o', out, '--batch-size', '20'],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const temps = () => readdirSync(dir).filter((f) => f.endsWith('.tmp'));
    while (s.admin.stats().jobs_submitted < 2 || temps().length === 0)
      await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGINT');
    while (!/stopping/.test(stderr)) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGINT');
    // The status a shell reports: 130 from process.exit(130), or 128 + 2 when the second
    // Ctrl-C lands while node is already tearing down after the first one's exit (node puts
    // the default SIGINT action back then); the user sees 130 either way.
    const status = await new Promise<number | null>((resolve) =>
      child.on('close', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : null))),
    );
    expect(status).toBe(130);
    expect(stderr).toMatch(
      /Resume with:\n {2}enrich contacts .*in\.csv -o .*out\.csv --batch-size 20\n/,
    );
    expect(temps()).toEqual([]);
  });
});

describe.concurrent('a base URL the service has no endpoints under (e2e)', () => {
  it('a single lookup says the base URL is likely wrong, and how to check it (exit 2)', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const env = { ...(await serviceEnv(s)), ENRICH_BASE_URL: `${s.url}/v1` };
    const r = await runCli(['contact', '--email', 'ana@globex.example'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /POST \/contact: 404 Not Found.*the service has no POST \/contact endpoint: the base URL is likely wrong \[API_NOT_FOUND\]\nhint: check the base URL \(--base-url, ENRICH_BASE_URL/,
    );
  });

  it('a bulk run stops at the first batch instead of sending every one (exit 2)', async (t) => {
    const s = await sandboxForTest(t, { port: 0 });
    const env = { ...(await serviceEnv(s)), ENRICH_BASE_URL: `${s.url}/v1` };
    const { file, out } = await files(30);
    const r = await runCli(
      ['contacts', file, '-o', out, '--batch-size', '10', '--concurrency', '1'],
      {
        env,
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /stopped early: POST \/contacts: 404 Not Found.*the base URL is likely wrong/,
    );
    expect(r.stderr).toMatch(/hint: check the base URL/);
    // One POST, answered 404: the other two batches were never sent.
    expect(s.admin.stats().requests_by_status['404']).toBe(1);
  });
});
