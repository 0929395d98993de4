import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  contactRows,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { journaled, untilJournaled } from '../helpers/journaled.js';
import { sandboxForTest as sandboxFor, type TestEnd } from '../integration/bulk-harness.js';

beforeAll(() => ensureBuilt());

/**
 * The two sandbox modes of a scenario run side by side (`it.concurrent.for(SANDBOX_MODES)`, each
 * pair in a describe of its own): each has its own sandbox, state, cache and files.
 */

describe('enrich cache clear | prune keep runs holding paid jobs (e2e)', () => {
  describe('a run stopped by --timeout', () => {
    it.concurrent.for(SANDBOX_MODES)(
      '$name: a run stopped by --timeout (its output written, its job still running) survives clear and prune; its resume pays nothing again (regression: erased, every row paid twice)',
      async ({ specOnly }, t) => {
        const sb = await sandboxFor(t, { port: 0, host: '127.0.0.1', jobMs: 2500, specOnly });
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
        // Still listed, not downloaded: running, or done at the service on a loaded machine (the
        // job takes 2.5 s, and four CLI runs came before this one).
        expect(jobs.stdout).toMatch(/"status": "(running|done)"/);

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
  });

  it('the decompressed copy of a gzip input that a killed run left in TMPDIR (contact data) goes with cache prune; the resume reads the file again (regression: kept for ever)', async (t) => {
    const sb = await sandboxFor(t, { port: 0, host: '127.0.0.1', jobMs: 60_000 });
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

  /** Day 1: rows 1, 3, 5 answered (and cached) by one run; the six-row file's run takes them from the cache and sends 0, 2, 4 (--no-wait). */
  async function dayOne(t: TestEnd, specOnly: boolean) {
    const sb = await sandboxFor(t, { port: 0, host: '127.0.0.1', jobMs: 1500, specOnly });
    const env: Record<string, string> = {
      ...(await tempEnv()),
      ENRICH_BASE_URL: sb.url,
      ENRICH_API_KEY: sb.apiKey,
    };
    const dir = await tempDir();
    const rows = contactRows(6);
    const odd = rows.filter((_, i) => i % 2 === 1);
    const first = await writeCsv(dir, 'cq1.csv', CONTACT_HEADER, odd);
    expect(
      (await runCli(['contacts', first, '-o', join(dir, 'cq1.o.csv'), '-q'], { env })).code,
    ).toBe(0);
    const input = await writeCsv(dir, 'cq2.csv', CONTACT_HEADER, rows);
    const out = join(dir, 'cq2.o.csv');
    const args = ['contacts', input, '-o', out, '--no-progress'];
    const submitted = await runCli([...args, '--no-wait', '-q'], { env });
    expect(submitted.code).toBe(0);
    expect(sb.admin.stats()).toMatchObject({ records_submitted: 6, credits_charged: 6 });
    const cleared = await runCli(['cache', 'clear'], { env });
    expect(cleared.code).toBe(0);
    return { env, args, out, rows, sb };
  }

  /** Every row of the output in input order, answered (its id and its status). */
  async function expectAllAnswered(out: string, rows: string[][]) {
    const lines = (await readFile(out, 'utf8')).trim().split('\n').slice(1);
    expect(lines.map((l) => l.split(',')[0])).toEqual(rows.map((r) => r[0]));
    for (const l of lines) expect(l).toMatch(/,enriched,/);
  }

  describe('a resumed run whose cache hits were cleared', () => {
    it.concurrent.for(SANDBOX_MODES)(
      '$name: a resumed run whose cache hits were cleared since sends those rows itself, once, joined in input order (regression: exit 3 naming --restart)',
      async ({ specOnly }, t) => {
        const { env, args, out, rows, sb } = await dayOne(t, specOnly);
        const resumed = await runCli([...args, '--json'], { env });
        expect(resumed.code).toBe(0);
        expect(resumed.stderr).not.toMatch(/restart|not sent/);
        expect(JSON.parse(resumed.stdout)).toMatchObject({
          statuses: { enriched: 6, failed: 0 },
          cache: { hits: 0, gone: 0, resent: 3 },
          // Run 1's job (downloaded now) and the batch of the three whose answers were gone.
          credits_charged: 6,
        });
        // The three whose answers were gone, once; the three run 1 sent, never again.
        expect(sb.admin.stats()).toMatchObject({ records_submitted: 9, credits_charged: 9 });
        await expectAllAnswered(out, rows);
        const again = await runCli([...args, '--json'], { env });
        expect(again.code).toBe(0);
        expect(sb.admin.stats()).toMatchObject({ records_submitted: 9, credits_charged: 9 });
      },
    );
  });

  describe('--max-credits on the rows whose answers were gone', () => {
    it.concurrent.for(SANDBOX_MODES)(
      '$name: the rows whose cached answers were gone count against --max-credits; the next resume sends the rest, paying for each once',
      async ({ specOnly }, t) => {
        const { env, args, out, rows, sb } = await dayOne(t, specOnly);
        const capped = await runCli([...args, '--max-credits', '1', '--json'], { env });
        expect(capped.code).toBe(5);
        expect(JSON.parse(capped.stdout)).toMatchObject({
          statuses: { enriched: 4, failed: 2 },
          cache: { gone: 0, resent: 1 },
        });
        expect(capped.stderr).toMatch(/--max-credits/);
        expect(sb.admin.stats()).toMatchObject({ records_submitted: 7, credits_charged: 7 });
        const rest = await runCli([...args, '--json'], { env });
        expect(rest.code).toBe(0);
        expect(JSON.parse(rest.stdout)).toMatchObject({ cache: { resent: 3 } });
        expect(sb.admin.stats()).toMatchObject({ records_submitted: 9, credits_charged: 9 });
        await expectAllAnswered(out, rows);
      },
    );
  });

  describe('a resume killed after journaling the resent batch', () => {
    it.concurrent.for(SANDBOX_MODES)(
      '$name: a resume killed after journaling the batch of rows whose cached answers were gone, its POST not answered: the next resume pays for them once',
      async ({ specOnly }, t) => {
        const { env, args, out, rows, sb } = await dayOne(t, specOnly);
        // The resume's first POST is that batch's: held until the process is gone.
        sb.admin.setFaults({ next: [{ delay_ms: 30_000, path: '/contacts' }] });
        const run = await spawnCli([...args, '-q'], { env });
        const state = env.ENRICH_STATE_DIR as string;
        await untilJournaled(state, /"t":"submit","batch":"g1"/);
        expect(journaled(state, /"t":"refill","batch":"g1","rows":\[1,3,5\]/)).toBe(true);
        run.child.kill('SIGKILL');
        await run.code;
        sb.admin.setFaults({});
        let resumed = await runCli([...args, '--json'], { env });
        // Killed before any answer showed this service honours Idempotency-Key: sent again
        // (with the journaled key) only when asked.
        if (resumed.code === 3 && /never confirmed them/.test(resumed.stderr))
          resumed = await runCli([...args, '--resend-unconfirmed', '--json'], { env });
        expect(resumed.code).toBe(0);
        expect(JSON.parse(resumed.stdout)).toMatchObject({ statuses: { enriched: 6 } });
        expect(sb.admin.stats()).toMatchObject({ records_submitted: 9, credits_charged: 9 });
        await expectAllAnswered(out, rows);
      },
    );
  });
});
