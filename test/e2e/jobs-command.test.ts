import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';

let sb: SandboxHandle;
let env: Record<string, string>;
let dir: string;
let contactsFile: string;
let companiesFile: string;

beforeAll(async () => {
  await ensureBuilt();
  sb = await startSandbox({ port: 0 });
  env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
  dir = await tempDir();
  contactsFile = await writeCsv(dir, 'people.csv', CONTACT_HEADER, contactRows(6));
  companiesFile = join(dir, 'accounts.csv');
  await writeFile(companiesFile, 'Company,Website\nAcme,acme.com\nGlobex,globex.com\n');
  const q = ['-q', '--no-cache'];
  expect(
    (await runCli(['contacts', contactsFile, '-o', join(dir, 'p.csv'), ...q], { env })).code,
  ).toBe(0);
  expect(
    (await runCli(['companies', companiesFile, '-o', join(dir, 'a.csv'), ...q], { env })).code,
  ).toBe(0);
}, 120_000);
afterAll(() => sb?.close());

interface ListedJob {
  job_id: string;
  kind: string;
  input: string;
  status: string;
}
const listed = async (...args: string[]) =>
  JSON.parse((await runCli(['jobs', 'list', '--json', ...args], { env })).stdout) as ListedJob[];

describe('enrich jobs (e2e)', () => {
  it('show: a prefix under 4 characters is "too short", not "not in the journal" (exit 2)', async () => {
    const r = await runCli(['jobs', 'show', '1d'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'enrich: job id "1d" is too short: give the full id, or at least its first 4 characters [USAGE]',
    );
    expect(r.stderr).not.toMatch(/not in the local journal/);
    const none = await runCli(['jobs', 'show', 'ffffffff'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no job ffffffff in the local journal/);
  });

  it('list --all --limit is refused (exit 2) rather than one of them dropped', async () => {
    const r = await runCli(['jobs', 'list', '--all', '--limit', '1'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--all and --limit: choose one [USAGE]');
    expect(r.stdout).toBe('');
  });

  it('list --input and --status keep the runs of one file and the jobs in one status', async () => {
    expect((await listed()).map((j) => j.kind).sort()).toEqual(['companies', 'contacts']);
    const ofFile = await listed('--input', companiesFile);
    expect(ofFile.map((j) => j.kind)).toEqual(['companies']);
    expect((await listed('--status', 'done')).length).toBe(2);
    expect(await listed('--status', 'running')).toEqual([]);
    const none = await runCli(['jobs', 'list', '--status', 'running'], { env });
    expect(none.stderr).toMatch(/no journaled job with status running/);
    const bad = await runCli(['jobs', 'list', '--status', 'finished'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--status: expected one of submitting, running, done, failed/);
  });

  it('fetch finds the kind of a job the local journal does not know, and names both addresses when neither has it', async () => {
    const [company] = await listed('--input', companiesFile);
    const elsewhere = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
    const out = join(dir, 'fetched.json');
    const r = await runCli(['jobs', 'fetch', company!.job_id, '-o', out], { env: elsewhere });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/is not in the local journal; the service has it as a companies job/);
    expect(JSON.parse(await readFile(out, 'utf8')).companies).toHaveLength(2);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const missing = await runCli(['jobs', 'fetch', unknown], { env: elsewhere });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /no results for it as a contacts job nor as a companies job .*\[API_NOT_FOUND\]\nhint: its results may have expired/,
    );
  });

  // Last: its run adds a job the other tests' listings do not expect.
  it('fetch --kind of the other kind than the journal says is refused, naming the kind (regression: a bare 404)', async () => {
    const [contacts] = await listed('--input', contactsFile);
    const r = await runCli(['jobs', 'fetch', contacts!.job_id, '--kind', 'companies'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `--kind companies: job ${contacts!.job_id} is journaled as a contacts job (its run sent it to /contacts); leave out --kind`,
    );
    const same = await runCli(['jobs', 'fetch', contacts!.job_id, '--kind', 'contacts'], { env });
    expect(same.code).toBe(0);
  });

  it('fetch into a reader that goes away never ends in 0 (regression: exit 0, nothing said)', async () => {
    const big = await writeCsv(dir, 'big.csv', CONTACT_HEADER, contactRows(1500));
    const q = ['-q', '--no-cache', '--batch-size', '1500'];
    expect(
      (await runCli(['contacts', big, '-o', join(dir, 'big-out.csv'), ...q], { env })).code,
    ).toBe(0);
    const [job] = await listed('--input', big);
    const { child, out, code } = await spawnCli(['jobs', 'fetch', job!.job_id], { env });
    child.stdout.once('data', () => child.stdout.destroy());
    expect(await code).toBe(2);
    expect(out.stderr).toMatch(/the output was closed before everything was written/);
    // To a file, or read to its end: 0.
    const whole = await runCli(['jobs', 'fetch', job!.job_id], { env });
    expect(whole.code).toBe(0);
    expect((JSON.parse(whole.stdout) as { contacts: unknown[] }).contacts).toHaveLength(1500);
  });

  it('list --input - keeps the runs of standard input, listed as "-" (regression: "no journaled job of <cwd>/-")', async () => {
    const csv = 'Email,Company\nann@stdin-only.io,Stdin Only\n';
    const q = ['-q', '--no-cache'];
    expect(
      (await runCli(['contacts', '-', '-o', join(dir, 'stdin.csv'), ...q], { env, input: csv }))
        .code,
    ).toBe(0);
    const jobs = await listed('--input', '-');
    expect(jobs.map((j) => [j.input, j.kind])).toEqual([['-', 'contacts']]);
    const table = await runCli(['jobs', 'list', '--input', '-'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(jobs[0]!.job_id);
  });
});
