import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';
import { filesContaining, firstDifference, recordFigure } from './figures.js';
import { mapLimit } from '../helpers/map-limit.js';

beforeAll(ensureBuilt, 120_000);

/** The sandboxes of the points running now (two at a time): closed after the test, pass or fail. */
const open = new Set<SandboxHandle>();
afterEach(async () => {
  await Promise.all([...open].map((s) => s.close()));
  open.clear();
});
async function sandbox(o: Parameters<typeof startSandbox>[0]): Promise<SandboxHandle> {
  const s = await startSandbox(o);
  open.add(s);
  return s;
}
async function closeSandbox(s: SandboxHandle): Promise<void> {
  open.delete(s);
  await s.close();
}

/**
 * The kill points are independent (each its own sandbox, state and output directory) and
 * mostly wait (on jobs, polls and process start-up): they run two at a time, which shortens
 * the suite's longest file. Gathering RELIABILITY.md's figures (ENRICH_FIGURES) runs them
 * one at a time, so the published timings stay those of a lone run.
 */
const PARALLEL = process.env.ENRICH_FIGURES ? 1 : 2;

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const RESULTS = '/contacts/results/{job_id}.json';

/** What the watcher sees of a running CLI: sandbox counters and the output directory. */
interface Seen {
  ms: number;
  submitted: number;
  polls: number;
  msSinceAllSubmitted: number;
  tmpBytes: number;
  outExists: boolean;
}

/** A kill point: a name, the first observation at which the process is killed, and how long jobs take. */
interface Point {
  name: string;
  when: (s: Seen, total: { batches: number; bytes: number }) => boolean;
  /** Jobs of the sandbox take this long (400 ms puts a 1 s poll wait in the run); default 0. */
  jobMs?: number;
}
const POLLING = 400;

const POINTS: Point[] = [
  { name: 'at spawn', when: () => true },
  { name: 'starting up (40 ms)', when: (s) => s.ms >= 40 },
  { name: 'reading the input (150 ms)', when: (s) => s.ms >= 150 },
  { name: 'after the 1st submission', when: (s) => s.submitted >= 1 },
  { name: 'after the 2nd submission', when: (s) => s.submitted >= 2 },
  { name: 'after 4 submissions', when: (s) => s.submitted >= 4 },
  { name: 'after 6 submissions', when: (s) => s.submitted >= 6 },
  { name: 'after 9 submissions', when: (s) => s.submitted >= 9 },
  { name: 'after the last submission', when: (s, t) => s.submitted >= t.batches },
  { name: 'after the 1st poll', when: (s) => s.polls >= 1, jobMs: POLLING },
  { name: 'after 3 polls', when: (s) => s.polls >= 3, jobMs: POLLING },
  { name: 'after 8 polls', when: (s) => s.polls >= 8, jobMs: POLLING },
  { name: 'waiting between polls', when: (s) => s.msSinceAllSubmitted >= 500, jobMs: POLLING },
  { name: 'after the first downloads', when: (s, t) => s.polls >= t.batches + 1, jobMs: POLLING },
  { name: 'after most downloads', when: (s, t) => s.polls >= t.batches + 8, jobMs: POLLING },
  { name: 'output temp file created', when: (s) => s.tmpBytes >= 0 },
  { name: 'output 25% written', when: (s, t) => s.tmpBytes >= t.bytes / 4 },
  { name: 'output 50% written', when: (s, t) => s.tmpBytes >= t.bytes / 2 },
  { name: 'output 90% written', when: (s, t) => s.tmpBytes >= t.bytes * 0.9 },
  { name: 'output renamed into place', when: (s) => s.outExists },
];

/** Spawns the CLI and SIGKILLs it at the first observation matching `point`; reports what was seen. */
async function runUntil(
  args: string[],
  env: Record<string, string>,
  s: SandboxHandle,
  out: string,
  point: Point,
  total: { batches: number; bytes: number },
): Promise<{ killed: boolean; seen?: Seen }> {
  const start = Date.now();
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: 'ignore',
  });
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      exited = true;
      resolve();
    }),
  );
  const dir = join(out, '..');
  const name = out.slice(dir.length + 1);
  let allSubmittedAt: number | undefined;
  let seen: Seen | undefined;
  while (!exited) {
    const stats = s.admin.stats();
    const tmp = readdirSync(dir).find((f) => f.startsWith(`.${name}.`) && f.endsWith('.tmp'));
    let tmpBytes = -1;
    try {
      if (tmp) tmpBytes = statSync(join(dir, tmp)).size;
    } catch {
      // renamed between readdir and stat
    }
    if (allSubmittedAt === undefined && stats.jobs_submitted >= total.batches)
      allSubmittedAt = Date.now();
    const now: Seen = {
      ms: Date.now() - start,
      submitted: stats.jobs_submitted,
      polls: stats.requests_by_path[RESULTS] ?? 0,
      msSinceAllSubmitted: allSubmittedAt === undefined ? -1 : Date.now() - allSubmittedAt,
      tmpBytes,
      outExists: existsSync(out),
    };
    if (point.when(now, total)) {
      seen = now;
      child.kill('SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await closed;
  return { killed: seen !== undefined, seen };
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('crash and resume (acceptance)', () => {
  it('SIGKILL at 20 points of a run: the same command always completes with the same output, no batch submitted twice, never a half-written output', async () => {
    const dir = await tempDir('enrich-crash-');
    const rows = contactRows(2600, { dupEvery: 9, invalidEvery: 61 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const args = (out: string) => [
      'contacts',
      file,
      '-o',
      out,
      '--batch-size',
      '200',
      '--concurrency',
      '2',
      '-q',
    ];
    const latency = { faults: { latency_ms: 8 } };

    // The reference run: its jobs are instant (the output does not depend on job times; the
    // kill points below compare runs of either job time with it).
    const clean = await sandbox({ port: 0, ...latency });
    const cleanOut = join(dir, 'clean', 'out.csv');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'clean'));
    const env0 = { ...(await tempEnv()), ENRICH_BASE_URL: clean.url, ENRICH_API_KEY: clean.apiKey };
    const t0 = Date.now();
    expect((await runCli(args(cleanOut), { env: env0 })).code).toBe(0);
    const cleanMs = Date.now() - t0;
    const expected = await readFile(cleanOut, 'utf8');
    const batches = clean.admin.stats().jobs_submitted;
    const records = clean.admin.stats().records_submitted;
    const bytes = Buffer.byteLength(expected);
    await closeSandbox(clean);
    expect(batches).toBeGreaterThanOrEqual(12);

    const outcomes = await mapLimit(POINTS, PARALLEL, async (point, i) => {
      const s = await sandbox({ port: 0, ...latency, jobMs: point.jobMs ?? 0 });
      const env: Record<string, string> = {
        ...(await tempEnv()),
        ENRICH_BASE_URL: s.url,
        ENRICH_API_KEY: s.apiKey,
      };
      const t = Date.now();
      const outDir = join(dir, `p${i}`);
      await mkdir(outDir);
      const out = join(outDir, 'out.csv');
      const { killed, seen } = await runUntil(args(out), env, s, out, point, { batches, bytes });
      // Never a half-written output in place: absent, or complete.
      const inPlace = existsSync(out);
      if (inPlace) expect(await readFile(out, 'utf8')).toBe(expected);
      const killMs = Date.now() - t;
      let again = await runCli(args(out), { env });
      // Killed before any answer taught the client that this service honours Idempotency-Key:
      // a batch whose POST may have reached it is not sent again by itself (exit 3, saying
      // so); --resend-unconfirmed sends it with the same key, which this sandbox replays.
      const unconfirmed = again.code === 3 && /never confirmed them/.test(again.stderr);
      if (unconfirmed) again = await runCli([...args(out), '--resend-unconfirmed'], { env });
      expect(again.stderr, point.name).toBe('');
      expect(again.code).toBe(0);
      expect(firstDifference(await readFile(out, 'utf8'), expected)).toBeUndefined();
      const stats = s.admin.stats();
      expect(stats.jobs_submitted, point.name).toBe(batches);
      // jobs_submitted does not count a replayed Idempotency-Key: the POSTs themselves show
      // that only batches whose answer the kill cut off (at most --concurrency 2) went again.
      const posts = stats.requests_by_path['/contacts'] ?? 0;
      expect(posts - batches, point.name).toBeGreaterThanOrEqual(0);
      expect(posts - batches, point.name).toBeLessThanOrEqual(2);
      expect(stats.records_submitted, point.name).toBe(records);
      expect(stats.credits_charged, point.name).toBe(records);
      // No temp file left behind by the killed run.
      expect(readdirSync(outDir), point.name).toEqual(['out.csv']);
      expect(filesUnder(env.ENRICH_STATE_DIR as string).filter((f) => f.endsWith('.tmp'))).toEqual(
        [],
      );
      // The key is in none of the files the killed and the resumed run wrote.
      expect(filesContaining([env.ENRICH_STATE_DIR as string, outDir], s.apiKey)).toEqual([]);
      const outcome: Record<string, unknown> = {
        point: point.name,
        killed,
        ...seen,
        output_in_place_at_kill: inPlace,
        ms: killMs,
        resume_ms: Date.now() - t - killMs,
      };
      await closeSandbox(s);
      return outcome;
    });
    recordFigure('crash-resume', {
      rows: rows.length,
      batches,
      bytes,
      clean_ms: cleanMs,
      outcomes,
    });
    // The points really were reached: the run was killed at each of them, not finished first.
    expect(outcomes.filter((o) => o.killed).length).toBeGreaterThanOrEqual(18);
  }, 300_000);
});
