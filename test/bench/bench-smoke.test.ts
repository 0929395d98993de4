// A smoke run of `npm run bench` (bench/run.js) at a tiny size, so the harness cannot rot
// unnoticed: every section of its JSON is there, every number finite and positive, every
// client run wrote every row. Timings are never compared with anything.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../api/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUN = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

let child: ChildProcess | undefined;
let scratch: string | undefined;

/** True while any process of the group (the harness and whatever it started) is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

afterEach(() => {
  // The harness runs in a process group of its own: pass or fail, nothing it started survives.
  if (child?.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
  child = undefined;
  // The harness's temporary files: left behind when it was killed before its own cleanup.
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** Runs bench/run.js in its own process group; resolves its exit and output. */
function runBench(args: string[]) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
  };
  scratch = mkdtempSync(join(tmpdir(), 'enrich-bench-smoke-'));
  env.TMPDIR = scratch;
  const c = spawn(process.execPath, [RUN, ...args], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = c;
  let stdout = '';
  let stderr = '';
  c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // Its exit and the end of its stdout, not 'close': a process it leaked would hold the
  // inherited stderr open, and the leak is for the test to report, not to wait on.
  const exited = new Promise<number | null>((resolve, reject) => {
    c.on('error', reject);
    c.on('exit', (code) => resolve(code));
  });
  const stdoutEnded = new Promise((resolve) => c.stdout.on('end', resolve));
  return Promise.all([exited, stdoutEnded]).then(([code]) => ({
    code,
    pid: c.pid ?? -1,
    stdout,
    stderr,
  }));
}

/** The paths under `obj` whose value is not a finite number > 0, with what they hold. */
function notPositive(obj: unknown, paths: string[]): string[] {
  const at = (p: string) =>
    p.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);
  return paths
    .filter((p) => {
      const v = at(p);
      return !(typeof v === 'number' && Number.isFinite(v) && v > 0);
    })
    .map((p) => `${p} = ${JSON.stringify(at(p))}`);
}

interface Requests {
  submits: number;
  polls: number;
  total: number;
}
interface CacheSection {
  limited?: { unavailable: string } | { limit_mb: number };
  profiled_cold: { lookups_ms: number };
  service: { warm: { credits: number } };
}
interface BenchJson {
  machine: { quick: boolean; runs: number };
  sandbox: { single_contact_http: { failed: number } };
  throughput: {
    rows: number;
    client: { output_rows: number };
    requests: Requests;
    cache?: CacheSection;
  }[];
  growth: { rows_ratio: number };
  single_vs_bulk: {
    rows: number;
    single_loop: { requests: number; output_rows: number };
    bulk: { requests: number; output_rows: number };
  };
}

// --no-build measures dist/ as it is: make sure it is the code under test.
beforeAll(ensureBuilt, 120_000);

describe('npm run bench (smoke, tiny sizes)', () => {
  it('prints one JSON object with every section, positive numbers and every row written', async () => {
    const sizes = [1000, 2000];
    const r = await runBench([
      '--no-build',
      '--quick',
      '--runs',
      '1',
      '--sizes',
      sizes.join(','),
      '--single-rows',
      '200',
      // The cache section's service: jobs of 1 ms a record (2 s for two jobs), not 5.
      '--service-record-ms',
      '1',
      '--memory-limit',
      '200',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // Whatever the harness started (sandboxes, clients) was gone when it exited.
    expect(groupAlive(r.pid)).toBe(false);
    // --no-build: the suite's dist/ is measured as it is, never rebuilt under other tests. (Not
    // dist/'s mtime: an e2e test's own ensureBuilt may rebuild it meanwhile, when src/ changed.)
    expect(r.stderr).not.toMatch(/stale|building|tsc/);

    const lines = r.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const json = JSON.parse(lines[0] ?? '') as BenchJson;

    const bad = notPositive(json, [
      'machine.cpus',
      ...['runs', 'node_ms', 'version_ms', 'help_ms', 'ratio_version', 'ratio_help'].map(
        (k) => `startup.${k}`,
      ),
      ...['bulk_contacts', 'bulk_companies'].flatMap((s) =>
        ['records', 'ms', 'per_second'].map((k) => `sandbox.${s}.${k}`),
      ),
      ...['requests', 'ms', 'per_second'].map((k) => `sandbox.single_contact_http.${k}`),
      ...sizes.flatMap((_, i) =>
        [
          'file_mb',
          'baseline.wall_ms',
          'baseline.cpu_ms',
          'baseline.rss_mb',
          'client.wall_ms',
          'client.cpu_ms',
          'client.rss_mb',
          'client.rss_mb_max',
          'client.sandbox_cpu_ms',
          'floor.wall_ms',
          'floor.cpu_ms',
          'floor.output_copy_wall_ms',
          'floor.output_copy_cpu_ms',
          'ratio.wall',
          'ratio.cpu',
          'ratio.floor_wall',
          'ratio.floor_cpu',
          'ratio.wall_per_row_us',
          'requests.submits',
          'requests.polls',
          'requests.total',
          'client.rss_anon_mb',
          'warm.wall_ms',
          'warm.cpu_ms',
          'warm.rss_mb',
          'warm.rss_anon_mb',
          'ratio.cold_over_warm_wall',
          'ratio.cold_over_warm_cpu',
        ].map((k) => `throughput.${i}.${k}`),
      ),
      // The results cache's section, at the largest size only.
      ...[
        'profiled_cold.wall_ms',
        'profiled_cold.cpu_ms',
        'profiled_cold.credits',
        'service.cold.wall_ms',
        'service.warm.wall_ms',
        'service.cold.credits',
        'service.cold_over_warm_wall',
      ].map((k) => `throughput.1.cache.${k}`),
      'growth.rss_ratio',
      'growth.requests_ratio',
      ...['single_loop.wall_ms', 'single_loop.cpu_ms', 'bulk.wall_ms', 'bulk.cpu_ms'].map(
        (k) => `single_vs_bulk.${k}`,
      ),
      'single_vs_bulk.bulk.requests',
      'single_vs_bulk.ratio_wall',
    ]);
    expect(bad).toEqual([]);

    expect(json.machine).toMatchObject({ quick: true, runs: 1 });
    expect(json.sandbox.single_contact_http.failed).toBe(0);
    expect(json.throughput.map((t) => [t.rows, t.client.output_rows])).toEqual(
      sizes.map((n) => [n, n]),
    );
    for (const { requests: q } of json.throughput) {
      expect(Number.isInteger(q.submits) && Number.isInteger(q.polls)).toBe(true);
      // Every job submitted was polled at least once; nothing was asked per row.
      expect(q.polls).toBeGreaterThanOrEqual(q.submits);
      expect(q.total).toBeGreaterThanOrEqual(q.submits + q.polls);
    }
    expect(json.growth.rows_ratio).toBe(2);
    // The warm runs were all cache hits (the harness fails a warm run that spends a credit).
    const cache = json.throughput[1]?.cache;
    expect(json.throughput[0]?.cache).toBeUndefined();
    expect(cache?.service.warm.credits).toBe(0);
    expect(cache?.profiled_cold.lookups_ms).toBeGreaterThanOrEqual(0);
    // The memory limit needs a cgroup this process may create (root); else it says why not.
    if (cache?.limited && 'unavailable' in cache.limited)
      expect(cache.limited.unavailable).toMatch(/cgroup|memory limit/);
    else
      expect(cache?.limited).toMatchObject({
        limit_mb: 200,
        cold: { credits: 1980 },
        warm: { credits: 0 },
      });
    expect(json.single_vs_bulk).toMatchObject({
      rows: 200,
      single_loop: { requests: 200, output_rows: 200 },
      bulk: { output_rows: 200 },
    });
    expect(json.single_vs_bulk.bulk.requests).toBeLessThan(
      json.single_vs_bulk.single_loop.requests,
    );
  }, 60_000);
});
