import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { clearCache } from '../../src/cache/results-cache.js';
import { enrichFile } from '../../src/index.js';
import { ROW_CLAIMS_DIR } from '../../src/pipeline/run/row-claims.js';
import type { JobEvent, RunProgress } from '../../src/pipeline/types.js';
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

const CACHED_AT = CONTACT_HEADER.length + 3;

/** A sandbox whose jobs take `jobMs`, and two files that share 20 rows (the second has 2 more). */
async function rig(t: Ctx, jobMs: number, specOnly: boolean, header28 = CONTACT_HEADER) {
  const s = await sandbox(t, { jobMs, specOnly });
  const dir = await tempDir();
  const client = clientFor(t, { baseUrl: s.url, apiKey: s.apiKey });
  const rows = contactRows(22);
  const d27 = await writeCsv(dir, 'd27.csv', CONTACT_HEADER, rows.slice(0, 20));
  const d28 = await writeCsv(dir, 'd28.csv', header28, rows);
  const warnings: string[][] = [[], []];
  const run = (who: 0 | 1, more: Record<string, unknown> = {}) =>
    enrichFile({
      kind: 'contacts',
      input: who === 0 ? d27 : d28,
      output: join(dir, who === 0 ? 'out27.csv' : 'out28.csv'),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
      batchSize: 50,
      onWarning: (w) => warnings[who]?.push(w),
      ...more,
    });
  return { s, dir, run, warnings };
}

/** Starts the first run, and resolves (to its end) once its job was accepted: it runs now. */
async function whileItsJobRuns(
  run: Rig['run'],
  more: Record<string, unknown> = {},
): Promise<{ done: ReturnType<Rig['run']> }> {
  let submitted!: () => void;
  const accepted = new Promise<void>((go) => (submitted = go));
  const done = run(0, { ...more, onJob: (e: JobEvent) => e.t === 'submitted' && submitted() });
  await accepted;
  return { done };
}

type Rig = Awaited<ReturnType<typeof rig>>;

/**
 * A resume whose cached answers are gone, beside a run of another file that shares them: d27 (20
 * rows) run and cached; d28 (d27 plus 2 rows) run without waiting (20 cache hits, its 2 rows'
 * job running); the cache cleared. `resume` runs d28 again (its 20 rows are sent again as a
 * refill batch, `g1`), `other` runs d29 (d27's 20 rows in another order: another file).
 */
async function resumeRig(t: Ctx, jobMs: number, specOnly: boolean) {
  const { s, dir, run, warnings } = await rig(t, jobMs, specOnly);
  expect(await run(0)).toMatchObject({ exitCode: 0, creditsCharged: 20 });
  expect(await run(1, { wait: false })).toMatchObject({ written: false, cacheHits: 20 });
  await clearCache(join(dir, 'cache'));
  const d29 = await writeCsv(dir, 'd29.csv', CONTACT_HEADER, contactRows(20).reverse());
  const other = (more: Record<string, unknown> = {}) =>
    run(0, { input: d29, output: join(dir, 'out29.csv'), ...more });
  return { s, dir, resume: (more: Record<string, unknown> = {}) => run(1, more), other, warnings };
}

/** Resolves once a run's job of batch `batch` was accepted (it runs now), with the run's end. */
async function whileBatchRuns<T>(
  start: (more: Record<string, unknown>) => Promise<T>,
  batch?: string,
): Promise<{ done: Promise<T> }> {
  let submitted!: () => void;
  const accepted = new Promise<void>((go) => (submitted = go));
  const onJob = (e: JobEvent) =>
    e.t === 'submitted' && (batch === undefined || e.batch === batch) && submitted();
  const done = start({ onJob });
  await Promise.race([accepted, done]);
  return { done };
}

describe('two bulk runs at once pay once for the rows their files share', () => {
  describe('a run started while another sends the same rows waits for', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run started while another sends the same rows waits for its answers and takes them from the cache ($name)',
      async ({ specOnly }, t) => {
        // Regression: d28 (d27 plus 2 rows), started while d27's job ran, paid for all 22 rows:
        // 42 credits for 22 distinct rows.
        const { s, dir, run, warnings } = await rig(t, 600, specOnly);
        const first = await whileItsJobRuns(run);
        const progress: RunProgress[] = [];
        const second = await run(1, { onProgress: (p: RunProgress) => progress.push(p) });
        // The progress line says what it waits for, and stops saying it once the answers are in.
        expect(progress.some((p) => p.rowsHeldElsewhere === 20)).toBe(true);
        expect(progress.at(-1)?.rowsHeldElsewhere).toBeUndefined();
        const earlier = await first.done;
        expect(earlier.exitCode).toBe(0);
        expect(second.exitCode).toBe(0);
        expect(s.admin.stats().credits_charged).toBe(22);
        expect(earlier.creditsCharged).toBe(20);
        expect(second).toMatchObject({ creditsCharged: 2, cacheHits: 20, creditsSaved: 20 });
        expect(warnings[1]).toContainEqual(
          expect.stringMatching(
            /^waiting for another enrich process \(pid \d+\), which is sending rows this file holds too/,
          ),
        );
        const out = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8'));
        expect(out).toHaveLength(23);
        const fromCache = out.slice(1).filter((r) => r[CACHED_AT] !== '');
        expect(fromCache).toHaveLength(20);
        // Both runs' claims are gone with them.
        expect(await readdir(join(dir, 'runs', ROW_CLAIMS_DIR)).catch(() => [])).not.toContainEqual(
          expect.stringMatching(/\.claims$/),
        );
      },
    );
  });

  describe('two runs started at the same moment pay once for the rows', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'two runs started at the same moment pay once for the rows they share, whichever claims first ($name)',
      async ({ specOnly }, t) => {
        const { s, run } = await rig(t, 300, specOnly);
        const [a, b] = await Promise.all([run(0), run(1)]);
        expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
        expect(s.admin.stats().credits_charged).toBe(22);
        expect(a.creditsCharged + b.creditsCharged).toBe(22);
        expect(a.cacheHits + b.cacheHits).toBe(20);
      },
    );
  });

  describe('rows another run still sends when this run’s time is up are', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'rows another run still sends when this run’s time is up are not sent (exit 3); the same call then takes their answers from the cache ($name)',
      async ({ specOnly }, t) => {
        const { s, dir, run, warnings } = await rig(t, 2_000, specOnly);
        const first = await whileItsJobRuns(run);
        const second = await run(1, { timeoutMs: 500 });
        expect(second.exitCode).toBe(3);
        expect(second).toMatchObject({ heldOut: 20, cacheHits: 0 });
        const out = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8'));
        // Its own 2 rows' job was still running too (exit 3 either way): the 20 say why they were not sent.
        const failed = out.slice(1).filter((r) => r.join(',').includes('another enrich process'));
        expect(failed).toHaveLength(20);
        expect(failed.every((r) => r[CONTACT_HEADER.length] === 'failed')).toBe(true);
        expect(failed[0]?.join(',')).toMatch(
          /not sent: another enrich process \(pid \d+\) was still looking this row up when this run's time was up \(timeoutMs\); run again to take its answer from the results cache/,
        );
        expect(warnings[1]?.some((w) => w.startsWith('waiting for another enrich process'))).toBe(
          true,
        );
        expect((await first.done).exitCode).toBe(0);
        const again = await run(1);
        expect(again.exitCode).toBe(0);
        expect(again.cacheHits).toBe(20); // its own 2 rows' job, still running before, is downloaded now
        expect(s.admin.stats().credits_charged).toBe(22);
        const rows = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        expect(rows.filter((r) => r[CONTACT_HEADER.length] === 'failed')).toEqual([]);
      },
    );
  });

  /**
   * d27 run with a --timeout that ends it while its job runs; d28 (another export's column
   * names: the runs' options differ, the cache entries do not) started while it still runs, or
   * only once it ended. Either way d28 downloads that job, paying for its own 2 rows alone.
   */
  async function afterHolderTimedOut(t: Ctx, specOnly: boolean, startsAfterItEnded: boolean) {
    const header = CONTACT_HEADER.map((h) =>
      h === 'Email' ? 'Email Address' : h === 'Company' ? 'Company Name' : h,
    );
    const { s, dir, run, warnings } = await rig(t, 1_500, specOnly, header);
    const first = await whileItsJobRuns(run, { timeoutMs: 300 });
    const ended = startsAfterItEnded ? await first.done : undefined;
    const second = await run(1);
    expect((ended ?? (await first.done)).exitCode).toBe(3); // its job was still running at its --timeout
    expect(second.exitCode).toBe(0);
    expect(second).toMatchObject({ cacheHits: 20, heldOut: 0 });
    expect(s.admin.stats().credits_charged).toBe(22);
    expect(warnings[1]).toContainEqual(
      expect.stringMatching(
        /^the run of .*d27\.csv that held rows of this file left 1 job\(s\) not downloaded: downloading them first/,
      ),
    );
    const rows = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
    expect(rows.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(22);
    return dir;
  }

  describe('a run whose time was up with the rows’ job still running', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run whose time was up with the rows’ job still running keeps them claimed; the run waiting for them then downloads that job, paying nothing more ($name)',
      async ({ specOnly }, t) => {
        // Regression (first version): the holder gave its rows back at its --timeout, and the
        // run waiting for them sent them again: 42 credits for 22 distinct rows.
        await afterHolderTimedOut(t, specOnly, false);
      },
    );
  });

  describe('a run started after another ended with the rows’ job still running', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run started only after another ended with the rows’ job still running downloads that job, paying nothing more ($name)',
      async ({ specOnly }, t) => {
        // Regression (session 30): a run's claims ended with it, also with its job still
        // running: a run of another file started after that end sent the rows again (42
        // credits for 22 rows).
        const dir = await afterHolderTimedOut(t, specOnly, true);
        // Its job downloaded, the ended run holds nothing more: no claim is left behind.
        expect(await readdir(join(dir, 'runs', ROW_CLAIMS_DIR)).catch(() => [])).toEqual([]);
      },
    );
  });

  describe('a --no-wait run started after another ended with the rows’ job still running', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a --no-wait run started after another ended with the rows’ job still running leaves those rows to that job; the next run takes them from the cache ($name)',
      async ({ specOnly }, t) => {
        const { s, run } = await rig(t, 1_500, specOnly);
        const first = await whileItsJobRuns(run, { timeoutMs: 300 });
        expect((await first.done).exitCode).toBe(3);
        // One look at that job (still running): its rows are left, not sent again.
        const quick = await run(1, { wait: false });
        expect(quick).toMatchObject({ heldOut: 20, cacheHits: 0 });
        await delay(1_600); // the job ends meanwhile
        const done = await run(1);
        expect(done).toMatchObject({ exitCode: 0, cacheHits: 20 });
        expect(s.admin.stats().credits_charged).toBe(22);
      },
    );
  });

  describe('rows whose holder gave them back unanswered', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'rows whose holder gave them back unanswered (its batch was refused) are sent by the run that waited, as a journaled refill batch ($name)',
      async ({ specOnly }, t) => {
        const { s, dir, run } = await rig(t, 0, specOnly);
        // The first run's POST is answered late, with a 401: it sends nothing, and stops.
        s.admin.setFaults({ next: [{ status: 401, delay_ms: 700, path: '/contacts' }] });
        const first = run(0);
        for (;;) {
          const names = await readdir(join(dir, 'runs', ROW_CLAIMS_DIR)).catch(() => []);
          if (names.some((n) => n.endsWith('.claims'))) break; // it has claimed its rows
          await delay(5);
        }
        const second = run(1);
        expect(await first).toMatchObject({ exitCode: 4, creditsCharged: 0 });
        const done = await second;
        expect(done.exitCode).toBe(0);
        expect(done).toMatchObject({ creditsCharged: 22, cacheHits: 0, heldOut: 0 });
        expect(s.admin.stats().credits_charged).toBe(22);
        const rows = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        expect(rows.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(22);
        // The rows it sent after waiting were journaled as a refill batch before their POST.
        const journals = await readdir(join(dir, 'runs'));
        const texts = await Promise.all(
          journals
            .filter((n) => !n.startsWith('.'))
            .map((n) => readFile(join(dir, 'runs', n, 'journal.jsonl'), 'utf8').catch(() => '')),
        );
        expect(texts.filter((t) => t.includes('"t":"refill"'))).toHaveLength(1);
      },
    );
  });

  describe('a --no-wait run does not wait for rows another run sends', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a --no-wait run does not wait for rows another run sends: it leaves them, and its next run takes them from the cache ($name)',
      async ({ specOnly }, t) => {
        const { s, run } = await rig(t, 1_000, specOnly);
        const first = await whileItsJobRuns(run);
        const quick = await run(1, { wait: false });
        // Left, not waited for (a wait would have taken them from the cache: 20 hits).
        expect(quick).toMatchObject({ exitCode: 0, written: false, heldOut: 20, cacheHits: 0 });
        expect((await first.done).exitCode).toBe(0);
        const done = await run(1);
        expect(done).toMatchObject({ exitCode: 0, cacheHits: 20 });
        expect(s.admin.stats().credits_charged).toBe(22);
      },
    );
  });

  describe('two runs each waiting for rows the other sends both finish', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'two runs each waiting for rows the other sends both finish, paying once for each row ($name)',
      async ({ specOnly }, t) => {
        // The same 40 rows in two orders, 10 to a batch: each run claims a batch the other then
        // waits for. Each sends what it holds before it waits, so neither waits for the other's
        // unsent rows (a wait for unsent rows would never end).
        const s = await sandbox(t, { jobMs: 300, specOnly });
        const dir = await tempDir();
        const client = clientFor(t, { baseUrl: s.url, apiKey: s.apiKey });
        const rows = contactRows(40);
        const fileA = await writeCsv(dir, 'a.csv', CONTACT_HEADER, rows);
        const fileB = await writeCsv(dir, 'b.csv', CONTACT_HEADER, [
          ...rows.slice(20),
          ...rows.slice(0, 20),
        ]);
        const run = (input: string, i: number) =>
          enrichFile({
            kind: 'contacts',
            input,
            output: join(dir, `out${i}.csv`),
            service: { client, baseUrl: s.url },
            runsDir: join(dir, 'runs'),
            cacheDir: join(dir, 'cache'),
            batchSize: 10,
          });
        const [a, b] = await Promise.all([run(fileA, 0), run(fileB, 1)]);
        expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
        expect(s.admin.stats().credits_charged).toBe(40);
        expect(a.cacheHits + b.cacheHits).toBe(40);
      },
    );
  });

  describe('a resume sending again rows whose cached answers are gone claims them', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a resume sending again rows whose cached answers are gone claims them: a run of another file started meanwhile waits for their answers and takes them from the cache ($name)',
      async ({ specOnly }, t) => {
        // Regression: the resume's refill rows were not claimed, and d29's run, started while
        // they were being looked up, paid for its 20 rows again: 62 credits for 22 distinct rows.
        const { s, dir, resume, other, warnings } = await resumeRig(t, 600, specOnly);
        expect(s.admin.stats().credits_charged).toBe(22);
        const refill = await whileBatchRuns(resume, 'g1');
        const beside = await other();
        const resumed = await refill.done;
        // d27's 20 and d28's 2, then d28's 20 once more (their answers were gone): never a third time.
        expect(s.admin.stats().credits_charged).toBe(42);
        expect(resumed).toMatchObject({ exitCode: 0, resumed: true, cacheResent: 20 });
        expect(beside).toMatchObject({ exitCode: 0, creditsCharged: 0, cacheHits: 20 });
        expect(warnings[0]).toContainEqual(
          expect.stringMatching(/^waiting for another enrich process \(pid \d+\)/),
        );
        const out = parseCsv(await readFile(join(dir, 'out29.csv'), 'utf8')).slice(1);
        expect(out.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(20);
      },
    );
  });

  describe('a resume whose cached answers are gone waits for rows another run is sending', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a resume whose cached answers are gone waits for those rows another run is sending, and takes their answers from the cache ($name)',
      async ({ specOnly }, t) => {
        // Regression: the resume sent its 20 refill rows while d29's run was sending the same
        // 20: 62 credits for 22 distinct rows.
        const { s, dir, resume, other, warnings } = await resumeRig(t, 600, specOnly);
        const first = await whileBatchRuns(other);
        const progress: RunProgress[] = [];
        const resumed = await resume({ onProgress: (p: RunProgress) => progress.push(p) });
        expect(await first.done).toMatchObject({ exitCode: 0, creditsCharged: 20 });
        // d27's 20 and d28's 2, then d29's 20 (the answers were gone): never a third time.
        expect(s.admin.stats().credits_charged).toBe(42);
        expect(resumed).toMatchObject({
          exitCode: 0,
          resumed: true,
          cacheResent: 0,
          cacheHits: 20,
        });
        expect(progress.some((p) => p.rowsHeldElsewhere === 20)).toBe(true);
        expect(progress.at(-1)?.rowsHeldElsewhere).toBeUndefined();
        expect(warnings[1]).toContainEqual(
          expect.stringMatching(/^waiting for another enrich process \(pid \d+\)/),
        );
        const out = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        expect(out.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(22);
      },
    );
  });

  describe('a resume whose cached answers are gone, still held by another run at its --timeout', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a resume whose cached answers are gone leaves those rows another run still sends at its --timeout (exit 3); the same command then takes them from the cache ($name)',
      async ({ specOnly }, t) => {
        const { s, dir, resume, other } = await resumeRig(t, 2_000, specOnly);
        const first = await whileBatchRuns(other);
        const stopped = await resume({ timeoutMs: 500 });
        expect(stopped).toMatchObject({ exitCode: 3, heldOut: 20, cacheHits: 0, cacheResent: 0 });
        const rows = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        const failed = rows.filter((r) => r.join(',').includes('another enrich process'));
        expect(failed).toHaveLength(20);
        expect(failed[0]?.join(',')).toMatch(
          /not sent: another enrich process \(pid \d+\) was still looking this row up when this run's time was up \(timeoutMs\)/,
        );
        expect((await first.done).exitCode).toBe(0);
        const again = await resume();
        expect(again).toMatchObject({ exitCode: 0, cacheHits: 20, cacheResent: 0, heldOut: 0 });
        expect(s.admin.stats().credits_charged).toBe(42);
        const out = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        expect(out.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(22);
      },
    );
  });

  describe('a resume waiting for rows whose holder gave them back unanswered', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a resume waiting for rows whose cached answers are gone sends them itself, once, when their holder gives them back unanswered (its batch was refused) ($name)',
      async ({ specOnly }, t) => {
        const { s, dir, resume, other } = await resumeRig(t, 300, specOnly);
        // d29's POST is answered late, with a 401: it sends nothing, and stops (its look at
        // d28's job, an earlier run's of a file sharing rows, is answered as usual).
        s.admin.setFaults({
          next: [{ path: '/contacts/results' }, { status: 401, delay_ms: 700, path: '/contacts' }],
        });
        const first = other();
        for (;;) {
          const names = await readdir(join(dir, 'runs', ROW_CLAIMS_DIR)).catch(() => []);
          if (names.some((n) => n.endsWith('.claims'))) break; // it has claimed its rows
          await delay(5);
        }
        const resumed = resume();
        expect(await first).toMatchObject({ exitCode: 4, creditsCharged: 0 });
        expect(await resumed).toMatchObject({ exitCode: 0, cacheResent: 20, heldOut: 0 });
        expect(s.admin.stats().credits_charged).toBe(42);
        const out = parseCsv(await readFile(join(dir, 'out28.csv'), 'utf8')).slice(1);
        expect(out.filter((r) => r[CONTACT_HEADER.length] === 'enriched')).toHaveLength(22);
      },
    );
  });

  describe('rows --max-credits leaves unsent by a resume', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'rows whose cached answers are gone that --max-credits leaves unsent by a resume are given back at once: a run beside it sends them without waiting ($name)',
      async ({ specOnly }, t) => {
        const { s, resume, other } = await resumeRig(t, 600, specOnly);
        const refill = await whileBatchRuns((more) => resume({ ...more, maxCredits: 10 }), 'g1');
        const progress: RunProgress[] = [];
        const beside = await other({ onProgress: (p: RunProgress) => progress.push(p) });
        const capped = await refill.done;
        expect(capped).toMatchObject({ exitCode: 5, cacheResent: 10 });
        // It waited for the 10 the resume sent, never for the 10 it left unsent.
        const waited = progress.flatMap((p) => p.rowsHeldElsewhere ?? []);
        expect(waited.length).toBeGreaterThan(0);
        expect(new Set(waited)).toEqual(new Set([10]));
        expect(beside).toMatchObject({ exitCode: 0, creditsCharged: 10, cacheHits: 10 });
        expect(s.admin.stats().credits_charged).toBe(42);
      },
    );
  });
});
