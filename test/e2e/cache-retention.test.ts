import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeFile } from 'node:fs/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  contactRows,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

let sb: SandboxHandle | undefined;
beforeAll(() => ensureBuilt());
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('enrich cache clear | prune keep runs holding paid jobs (e2e)', () => {
  it.each(SANDBOX_MODES)(
    '$name: a run stopped by --timeout (its output written, its job still running) survives clear and prune; its resume pays nothing again (regression: erased, every row paid twice)',
    async ({ specOnly }) => {
      sb = await startSandbox({ port: 0, host: '127.0.0.1', jobMs: 2500, specOnly });
      const env: Record<string, string> = {
        ...(await tempEnv()),
        ENRICH_BASE_URL: sb.url,
        ENRICH_API_KEY: sb.apiKey,
        ENRICH_RUN_RETENTION: '0s',
      };
      const dir = await tempDir();
      const input = await writeCsv(dir, 'to.csv', CONTACT_HEADER, contactRows(6));
      const out = join(dir, 'to.o.csv');
      const stopped = await runCli(['contacts', input, '-o', out, '--timeout', '1s', '-q'], {
        env,
      });
      expect(stopped.code).toBe(3);
      expect(sb.admin.stats().jobs_submitted).toBe(1);

      const cleared = await runCli(['cache', 'clear', '--json'], { env });
      expect(cleared.code).toBe(0);
      expect(JSON.parse(cleared.stdout)).toMatchObject({ runs_removed: 0, runs_kept: 1 });
      expect(cleared.stderr).toMatch(/kept 1 unfinished run\(s\)/);
      const pruned = await runCli(['cache', 'prune', '--json'], { env });
      expect(pruned.code).toBe(0);
      expect(JSON.parse(pruned.stdout)).toMatchObject({ runs_removed: 0 });
      // Nor the sweep at the start of another run (run_retention 0s).
      const other = await writeCsv(dir, 'x.csv', CONTACT_HEADER, [
        ['X1', 'Other', 'Row', 'other.row@else.io', 'Else', ''],
      ]);
      expect(
        (await runCli(['contacts', other, '-o', join(dir, 'x.o.csv'), '-q'], { env })).code,
      ).toBe(0);
      const jobs = await runCli(['jobs', 'list', '--input', input, '--json'], { env });
      expect(jobs.stdout).toContain('"running"');

      const resumed = await runCli(['contacts', input, '-o', out, '--json'], { env });
      expect(resumed.code).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ statuses: { enriched: 6 } });
      // The first job and x.csv's: none sent again, nothing paid twice.
      expect(sb.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 7 });

      // Downloaded and written: the run is finished now, and clear erases it.
      const after = await runCli(['cache', 'clear', '--json'], { env });
      expect(JSON.parse(after.stdout)).toMatchObject({ runs_kept: 0 });
    },
  );

  it('the decompressed copy of a gzip input that a killed run left in TMPDIR (contact data) goes with cache prune; the resume reads the file again (regression: kept for ever)', async () => {
    sb = await startSandbox({ port: 0, host: '127.0.0.1', jobMs: 60_000 });
    const dir = await tempDir();
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    const env: Record<string, string> = {
      ...(await tempEnv()),
      ENRICH_BASE_URL: sb.url,
      ENRICH_API_KEY: sb.apiKey,
      TMPDIR: tmp,
    };
    const plain = join(dir, 'plain.csv');
    await writeCsv(dir, 'plain.csv', CONTACT_HEADER, contactRows(4));
    const input = join(dir, 'in.csv.gz');
    await writeFile(input, gzipSync(await readFile(plain)));
    const args = ['contacts', input, '-o', join(dir, 'o.csv'), '-q'];
    const { child, code } = await spawnCli(args, { env });
    // Killed once its job is accepted (the copy is read by then).
    while (sb.admin.stats().jobs_submitted === 0) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    await code;
    expect(await readdir(tmp)).toHaveLength(1);
    const pruned = await runCli(['cache', 'prune'], { env });
    expect(pruned.code).toBe(0);
    expect(await readdir(tmp)).toEqual([]);
    const resumed = await runCli([...args, '--timeout', '1s'], { env });
    expect(resumed.code).toBe(3); // the job still runs: resumed, not sent again
    expect(sb.admin.stats().jobs_submitted).toBe(1);
    expect(await readdir(tmp)).toEqual([]); // its own copy removed at its end
  });

  it.each(SANDBOX_MODES)(
    '$name: a resumed run whose cache hits were pruned since exits 3 naming --restart, which sends only those rows (regression: exit 0, rows failed for ever)',
    async ({ specOnly }) => {
      sb = await startSandbox({ port: 0, host: '127.0.0.1', jobMs: 1500, specOnly });
      const env: Record<string, string> = {
        ...(await tempEnv()),
        ENRICH_BASE_URL: sb.url,
        ENRICH_API_KEY: sb.apiKey,
      };
      const dir = await tempDir();
      const rows = contactRows(6);
      const first = await writeCsv(dir, 'cq1.csv', CONTACT_HEADER, rows.slice(0, 3));
      expect(
        (await runCli(['contacts', first, '-o', join(dir, 'cq1.o.csv'), '-q'], { env })).code,
      ).toBe(0);
      const input = await writeCsv(dir, 'cq2.csv', CONTACT_HEADER, rows);
      const args = ['contacts', input, '-o', join(dir, 'cq2.o.csv'), '--no-progress'];
      const submitted = await runCli([...args, '--no-wait', '-q'], { env });
      expect(submitted.code).toBe(0);
      expect(sb.admin.stats().records_submitted).toBe(6); // 3, then the 3 not cached
      const pruned = await runCli(['cache', 'prune', '--older-than', '0s'], { env });
      expect(pruned.code).toBe(0);

      const resumed = await runCli([...args, '--json'], { env });
      expect(resumed.code).toBe(3);
      expect(JSON.parse(resumed.stdout)).toMatchObject({
        statuses: { enriched: 3, failed: 3 },
        cache: { hits: 0, gone: 3 },
      });
      expect(resumed.stderr).toContain('3 row(s) were not sent');
      const hint = resumed.stderr.split('\n').find((l) => l.trim().endsWith('--restart'));
      expect(hint?.trim()).toMatch(/^enrich contacts \S+cq2\.csv -o .* --restart$/);
      expect(sb.admin.stats().records_submitted).toBe(6);

      const restarted = await runCli([...args, '--restart', '--json'], { env });
      expect(restarted.code).toBe(0);
      expect(JSON.parse(restarted.stdout)).toMatchObject({
        statuses: { enriched: 6, failed: 0 },
        cache: { hits: 3 },
      });
      expect(sb.admin.stats().records_submitted).toBe(9); // only the 3 whose answers were gone
    },
  );
});
