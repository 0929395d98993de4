import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';

// A bulk run on Node 24 starts in a worker thread (src/cli/launch.ts). ENRICH_WORKER=1 asks
// for it on any version, so the Node 20 run of the suite holds it too: the same output, the
// same stdin, the same closed pipe and Ctrl-C as in the main thread. (On Node 24 every e2e
// test of a bulk run goes through it.)
beforeAll(ensureBuilt, 120_000);

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const WORKER_LINE = /debug: bulk run in a worker thread \(young generation 48 MB\)/;

/** `enrich <args>` with the worker asked for (spawnCli: the child, what it prints, its exit code). */
const spawnInWorker = (args: string[], env: Record<string, string>) =>
  spawnCli(args, { env: { ...env, ENRICH_WORKER: '1' } });

async function setUp(rows: number, o: { jobMs?: number } = {}) {
  const s = (sb = await startSandbox({ port: 0, ...o }));
  const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
  const dir = await tempDir();
  const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(rows));
  return { s, env, dir, file };
}

describe('a bulk run in a worker thread (e2e)', () => {
  it('writes what the main thread writes, and says where it runs under --debug', async () => {
    const { env, dir, file } = await setUp(30);
    const inWorker = await runCli(['contacts', file, '-o', join(dir, 'w.csv'), '--debug'], {
      env: { ...env, ENRICH_WORKER: '1' },
    });
    expect(inWorker.code).toBe(0);
    expect(inWorker.stderr).toMatch(WORKER_LINE);
    // The same file again, with another output: the cache answers, so compare against a
    // main-thread run of a copy made the same way (both cold).
    const { env: env2, dir: dir2, file: file2 } = await setUp(30);
    const inMain = await runCli(['contacts', file2, '-o', join(dir2, 'm.csv'), '--debug'], {
      env: { ...env2, ENRICH_WORKER: '0' },
    });
    expect(inMain.code).toBe(0);
    expect(inMain.stderr).not.toMatch(WORKER_LINE);
    const w = await readFile(join(dir, 'w.csv'), 'utf8');
    expect(w.split('\n')).toHaveLength(32);
    expect(w).toBe(await readFile(join(dir2, 'm.csv'), 'utf8'));
  });

  it('reads input "-" from the stdin the main thread hands it', async () => {
    const { env, dir } = await setUp(0);
    const csv = `${CONTACT_HEADER.join(',')}\n${contactRows(5)
      .map((r) => r.join(','))
      .join('\n')}\n`;
    const r = await runCli(['contacts', '-', '-o', join(dir, 'out.csv'), '--quiet'], {
      env: { ...env, ENRICH_WORKER: '1' },
      input: csv,
    });
    expect(r.code).toBe(0);
    expect((await readFile(join(dir, 'out.csv'), 'utf8')).trimEnd().split('\n')).toHaveLength(6);
  });

  it('a reader that goes away (-o - into a closed pipe) never ends in 0', async () => {
    const { env, file } = await setUp(3000);
    const { child, out, code: exited } = await spawnInWorker(['contacts', file, '-o', '-'], env);
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await exited;
    expect(code).not.toBe(0);
    expect(out.stderr).toMatch(/the output was closed before everything was written/);
  });

  it('Ctrl-C reaches the run: it stops, keeps the journal, exits 130 and says how to resume', async () => {
    const { s, env, dir, file } = await setUp(60, { jobMs: 60_000 });
    const run = ['contacts', file, '-o', join(dir, 'out.csv'), '--batch-size', '20'];
    const { child, out, code: exited } = await spawnInWorker(run, env);
    while (s.admin.stats().jobs_submitted < 3) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(130);
    expect(out.stderr).toMatch(/stopping: no new jobs will be submitted/);
    expect(out.stderr).toMatch(
      /Resume with:\n\s+enrich contacts .*in\.csv -o .*out\.csv --batch-size 20/,
    );
  });
});
