// `npm run bench:service [-- --rows 20000] [-- --parallel 2,8,0] [-- --record-ms 5] [-- --runs 1]
// [-- --args "--concurrency 4"] [-- --sandbox-args --spec-only]`: how long a user waits for
// results against a service with a capacity (issue 20). A sandbox process whose job of n records takes n x --record-ms and
// that runs at most --parallel-jobs P jobs of an account at once (0: no limit; later jobs
// queue) serves `enrich contacts` run with the default flags (plus --args). The bound: the
// service's own time, ceil(jobs / P) rounds of one job at the default batch size; the target
// is at most 1.25x the bound + 1 s, with no run ending in 429s. Prints a line per run on stderr
// and one JSON object on stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { countCsvRecords } from './lib/count-rows.js';
import { writeContacts } from './lib/gen-contacts.js';
import { measureNode, median } from './lib/measure.js';
import { clientEnv, startSandboxProcess } from './lib/sandbox-process.js';

const BIN = fileURLToPath(new URL('../bin/enrich.js', import.meta.url));
const log = (s) => process.stderr.write(`${s}\n`);

/** `--name value` pairs; an unknown flag stops the run. */
function parseFlags(argv) {
  const known = { '--rows': '20000', '--parallel': '2,8,0', '--record-ms': '5', '--runs': '1' };
  const o = { ...known, '--args': '', '--sandbox-args': '' };
  for (let i = 0; i < argv.length; i += 2) {
    if (!(argv[i] in o) || argv[i + 1] === undefined)
      throw new Error(
        `unknown flag or missing value: ${argv[i]} (flags: ${Object.keys(o).join(', ')})`,
      );
    o[argv[i]] = argv[i + 1];
  }
  const int = (k, v) => {
    if (!/^\d+$/.test(v.trim())) throw new Error(`${k}: expected a whole number, got "${v}"`);
    return Number(v);
  };
  return {
    rows: int('--rows', o['--rows']),
    parallel: o['--parallel'].split(',').map((p) => int('--parallel', p)),
    recordMs: int('--record-ms', o['--record-ms']),
    runs: int('--runs', o['--runs']),
    extra: o['--args'].split(/\s+/).filter(Boolean),
    sandboxExtra: o['--sandbox-args'].split(/\s+/).filter(Boolean),
  };
}

const BATCH = 1000; // the default --batch-size the bound is computed at

/** One client run against a fresh sandbox with `parallel` job slots; wall, CPU, jobs, 429s. */
async function run(work, input, f, parallel) {
  const sb = await startSandboxProcess([
    '--record-ms',
    String(f.recordMs),
    '--parallel-jobs',
    String(parallel),
    '--rate-limit',
    '50', // the sandbox's default: a run that floods it sees 429s
    ...f.sandboxExtra, // e.g. --spec-only: no Retry-After on 202s (api-spec.md promises none)
  ]);
  const state = mkdtempSync(join(work, 'state-'));
  try {
    const env = clientEnv(sb, state);
    const out = join(state, 'out.csv');
    const load = loadavg()[0];
    const r = await measureNode(BIN, ['contacts', input, '-o', out, '--quiet', ...f.extra], {
      env,
    });
    if (r.code !== 0) throw new Error(`enrich contacts exited ${r.code}: ${r.stderr.slice(-2000)}`);
    const rows = await countCsvRecords(out);
    if (rows !== f.rows) throw new Error(`enrich contacts wrote ${rows} rows of ${f.rows}`);
    const stats = await sb.stats();
    const jobs = stats.jobs_submitted;
    const jobMs = f.recordMs * BATCH;
    const bound = Math.ceil(jobs / (parallel === 0 ? jobs : parallel)) * jobMs;
    const limit = 1.25 * bound + 1000;
    return {
      parallel,
      load_1m: Math.round(load * 100) / 100,
      wall_ms: r.wall_ms,
      cpu_ms: r.cpu_ms,
      jobs,
      bound_ms: bound,
      limit_ms: limit,
      ratio: Math.round((r.wall_ms / bound) * 100) / 100,
      met: r.wall_ms <= limit,
      status_429: stats.requests_by_status?.['429'] ?? 0,
      requests: Object.values(stats.requests_by_path ?? {}).reduce((a, n) => a + n, 0),
    };
  } finally {
    await sb.close();
    rmSync(state, { recursive: true, force: true });
  }
}

let f;
try {
  f = parseFlags(process.argv.slice(2));
} catch (err) {
  log(`bench:service: ${err.message}`);
  process.exit(2);
}
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));
const work = mkdtempSync(join(tmpdir(), 'enrich-ttr-'));
try {
  const input = join(work, `contacts-${f.rows}.csv`);
  await writeContacts(input, f.rows);
  const results = [];
  for (const p of f.parallel) {
    const all = [];
    for (let k = 0; k < f.runs; k++) {
      const r = await run(work, input, f, p);
      all.push(r);
      log(
        `P=${p || 'unlimited'}: ${r.wall_ms} ms for ${r.jobs} jobs; bound ${r.bound_ms} ms (${r.ratio}x), limit ${r.limit_ms} ms: ${r.met ? 'met' : 'MISSED'}; ${r.status_429} 429s, ${r.requests} requests; client CPU ${r.cpu_ms} ms; load ${r.load_1m}`,
      );
    }
    const wall = median(all.map((r) => r.wall_ms));
    results.push({ ...all[0], wall_ms: wall, met: wall <= all[0].limit_ms, runs: all });
  }
  process.stdout.write(
    `${JSON.stringify({ rows: f.rows, record_ms: f.recordMs, args: f.extra, sandbox_args: f.sandboxExtra, results })}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
