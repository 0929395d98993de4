import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const fixture = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
let dir = '';

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'enrich-conventions-'));
}, 120_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('conventions of the CLI (e2e, built CLI)', () => {
  it("words commander's own errors like the CLI's, with exit 2", async () => {
    const env = await tempEnv();
    const unknown = await runCli(['contacts', 'x.csv', '--no-such-flag'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "enrich: unknown option '--no-such-flag' [USAGE]\n(run with --help for usage)\n",
    );
    const missing = await runCli(['contacts'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "enrich: missing required argument 'input' [USAGE]\n(run with --help for usage)\n",
    );
  });

  it('`enrich help jobs list` prints the help of `jobs list`, with its own examples only', async () => {
    const r = await runCli(['help', 'jobs', 'list'], { env: await tempEnv() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: enrich jobs list /);
    expect(r.stdout).toContain('Global Options:');
    expect(r.stdout).toContain('(default: 10)');
    expect(r.stdout).not.toContain('enrich jobs fetch');
  });

  it('refuses --json when the rows go to stdout (exit 2, before anything is sent)', async () => {
    const r = await runCli(['contacts', fixture, '--sandbox', '--json'], { env: await tempEnv() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'enrich: --json prints the run summary on stdout, where the enriched rows go without -o [USAGE]\n' +
        'hint: Write the rows to a file with -o enriched.csv (the summary then goes to stdout), or drop --json (--format json writes the rows themselves as JSON).\n',
    );
  });

  it('verify-emails --map email= (no column) is a usage error in its own words, before a key is needed', async () => {
    // It was read as contacts' "unmap the field": with no key the run stopped at AUTH_MISSING;
    // with one, on contacts' "no row can be sent with this mapping" and a hint to try companies.
    const r = await runCli(['verify-emails', fixture, '--map', 'email='], { env: await tempEnv() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'enrich: --map email=: no column after "email="; expected the name of the column holding the addresses, e.g. --map email="Work Email" [USAGE]\n' +
        'hint: Name the column as the header row spells it (quoted if it holds spaces), or leave out --map: the column is then found by its name and values (--dry-run shows which).\n',
    );
  });

  it('-v prints a line per job submitted and done on stderr; without it, none', async () => {
    // 25 rows: 2 invalid, 2 duplicates sent once: one job of 21 rows.
    const env = await tempEnv();
    const out = join(dir, 'verbose.csv');
    const verbose = await runCli(['contacts', fixture, '--sandbox', '-o', out, '-v'], { env });
    expect(verbose.code, verbose.stderr).toBe(0);
    const lines = verbose.stderr.split('\n');
    const uuid = '[0-9a-f-]{36}';
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^enrich: batch \\d+: submitted 21 rows as job ${uuid}$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^enrich: batch \\d+: job ${uuid} done: 21 records, 21 credits charged$`),
      ),
    );
    expect((await readFile(out, 'utf8')).trimEnd().split('\n')).toHaveLength(26);
    const quiet = await runCli(['contacts', fixture, '--sandbox', '-o', out], { env });
    expect(quiet.stderr).not.toContain('enrich: batch');
    const both = await runCli(['contacts', fixture, '--sandbox', '-o', out, '-v', '-q'], { env });
    expect(both.stderr).toBe('');
  });

  it('-v also says when a request is retried, and why (a 503 on a results download)', async () => {
    const sb = await startSandbox({ port: 0, jobMs: 0 });
    try {
      sb.admin.setFaults({ next: [{ status: 503, path: '/contacts/results' }] });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
      const r = await runCli(['contacts', fixture, '-o', join(dir, 'retried.csv'), '-v'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        /^enrich: retrying GET \/contacts\/results\/[0-9a-f-]{36}\.json in \d+ms \(attempt 2 of \d+, after 503 Service Unavailable\)$/m,
      );
      expect(r.stderr).not.toContain(sb.apiKey);
    } finally {
      await sb.close();
    }
  });

  it.runIf(existsSync('/dev/full'))(
    'rows on a stdout whose disk is full: a FILE_SYSTEM error with exit 2, no stack trace',
    async () => {
      const env = await tempEnv();
      for (const command of ['contacts', 'verify-emails']) {
        const full = openSync('/dev/full', 'w');
        const child = spawn(process.execPath, [bin, command, fixture, '--sandbox'], {
          env: { ...process.env, ...env },
          stdio: ['ignore', full, 'pipe'],
        });
        closeSync(full);
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        const code = await new Promise<number | null>((r) => child.on('close', r));
        expect(code).toBe(2);
        expect(stderr).toContain(
          'enrich: cannot write standard output: the disk is full (no space left on the device)',
        );
        expect(stderr).toContain('[FILE_SYSTEM]');
        expect(stderr).not.toMatch(/\n\s+at /);
      }
    },
  );
});
