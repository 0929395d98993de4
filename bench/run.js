// `npm run bench [-- --quick] [-- --runs N] [-- --sizes 100000,1000000] [-- --no-build]`: the
// benchmarks of issue 6, against the BUILT code (dist/ is rebuilt first when a source file is
// newer, unless --no-build). Prints a human summary on stderr and one JSON object on stdout;
// never fails on timing, but fails when a client run does not write every row.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { cacheRounds } from './lib/cache-rounds.js';
import { countCsvRecords } from './lib/count-rows.js';
import { parseBenchFlags } from './lib/flags.js';
import { writeContacts } from './lib/gen-contacts.js';
import { measureNode, median } from './lib/measure.js';
import { clientEnv, startSandboxProcess } from './lib/sandbox-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/enrich.js');
const log = (s) => process.stderr.write(`${s}\n`);
let flags;
try {
  flags = parseBenchFlags(process.argv.slice(2));
} catch (err) {
  log(`bench: ${err.message}`);
  process.exit(2);
}
const { quick, runs, sizes, singleRows, beforeDir, memoryLimitMb, serviceRecordMs } = flags;
// A signal becomes an exit, so the exit hook of lib/sandbox-process.js stops the sandboxes.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Rebuilds dist/ when any file of src/ is newer than the built CLI (with `build` false, only checks there is one). */
function ensureBuilt(build) {
  const built = join(ROOT, 'dist/cli/main.js');
  if (!build) {
    if (!existsSync(built)) throw new Error('dist/ is not built: run `npm run build` first');
    return;
  }
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  log('dist/ is stale: building (tsc -p tsconfig.build.json)...');
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
}

const ratio = (a, b) => Math.round((a / b) * 100) / 100;

/** A csv-parse -> csv-stringify copy of `file` (the floor's unit: reading and writing it). */
async function copyOf(work, file) {
  const b = await measureNode(join(ROOT, 'bench/baseline-copy.js'), [file, join(work, 'copy.csv')]);
  if (b.code !== 0) throw new Error(`baseline copy failed: ${b.stderr}`);
  return b;
}

/** The numbers of one measured run that the JSON keeps (memory apart: own and mapped). */
const kept = (r) => ({
  wall_ms: r.wall_ms,
  cpu_ms: r.cpu_ms,
  rss_mb: r.rss_mb,
  rss_anon_mb: r.rss_anon_mb,
  rss_file_mb: r.rss_file_mb,
});

/**
 * `enrich contacts input -o <dir>/<name>.csv` with `env`; fails unless it exits 0 and writes
 * every row (a run that drops rows is no benchmark: its numbers would flatter it).
 */
async function enrichRun(bin, input, rows, dir, name, env, o = {}) {
  const out = join(dir, `${name}.csv`);
  const r = await measureNode(bin, ['contacts', input, '-o', out, '--quiet'], { env, ...o });
  if (r.code !== 0)
    throw new Error(`enrich contacts (${name}) exited ${r.code}: ${r.stderr.slice(-2000)}`);
  const outputRows = await countCsvRecords(out);
  if (outputRows !== rows)
    throw new Error(`enrich contacts (${name}) wrote ${outputRows} rows of ${rows}`);
  return { ...r, out, output_rows: outputRows };
}

/**
 * The same rows again, all from the results cache the cold run filled (a copy of the input:
 * another file, so another run, not a resume of the first); fails if it spends a credit.
 */
async function warmRun(bin, input, rows, dir, env, sb, o = {}) {
  const copy = join(dir, 'warm-input.csv');
  copyFileSync(input, copy);
  const before = (await sb.stats()).credits_charged;
  const r = await enrichRun(bin, copy, rows, dir, 'warm', env, o);
  const spent = (await sb.stats()).credits_charged - before;
  if (spent !== 0)
    throw new Error(`the warm run spent ${spent} credits: its rows were not all cache hits`);
  rmSync(copy, { force: true });
  return r;
}

/**
 * One client run of `enrich contacts` against a fresh sandbox process (a cold run: an empty
 * results cache of its own); returns numbers, rows written and request counts, (`copyOutput`)
 * a copy of the output it produced, the second half of the floor, and (`warm`) a warm run of
 * the same rows after it.
 */
async function clientRun(work, input, rows, label, bin = BIN, copyOutput = false, warm = false) {
  const sb = await startSandboxProcess();
  const state = mkdtempSync(join(work, `state-${label}-`));
  try {
    const env = clientEnv(sb, state);
    const r = await enrichRun(bin, input, rows, state, 'out', env);
    const outputRows = r.output_rows;
    const outputCopy = copyOutput ? await copyOf(work, r.out) : undefined;
    rmSync(r.out, { force: true });
    const warmed = warm ? await warmRun(bin, input, rows, state, env, sb) : undefined;
    const stats = await sb.stats();
    const byPath = stats.requests_by_path ?? {};
    const sum = (pred) =>
      Object.entries(byPath)
        .filter(([p]) => pred(p))
        .reduce((a, [, n]) => a + n, 0);
    return {
      ...r,
      stderr: undefined,
      out: undefined,
      output_rows: outputRows,
      warm: warmed && kept(warmed),
      output_copy: outputCopy && { wall_ms: outputCopy.wall_ms, cpu_ms: outputCopy.cpu_ms },
      sandbox_cpu_ms: sb.cpuMs(),
      requests: {
        submits: sum((p) => p === '/contacts'),
        polls: sum((p) => p.startsWith('/contacts/results/')),
        total: sum(() => true),
        by_status: stats.requests_by_status,
      },
    };
  } finally {
    await sb.close();
    rmSync(state, { recursive: true, force: true });
  }
}

async function throughput(work) {
  const out = [];
  for (const rows of sizes) {
    const input = join(work, `contacts-${rows}.csv`);
    await writeContacts(input, rows);
    const base = [];
    const client = [];
    const before = [];
    const withBefore = beforeDir && rows === sizes[0];
    for (let k = 0; k < runs; k++) {
      if (withBefore) {
        const bin = join(beforeDir, 'bin/enrich.js');
        before.push(await clientRun(work, input, rows, `before-${rows}`, bin));
      }
      // Interleaved, so drifting machine load hits both alike.
      const load = loadavg()[0];
      const b = await copyOf(work, input);
      base.push(b);
      client.push({ ...(await clientRun(work, input, rows, String(rows), BIN, true, true)), load });
      const c = client[k];
      log(
        `  ${rows} rows, run ${k + 1}/${runs}: copy of input ${b.wall_ms} ms + of output ${c.output_copy.wall_ms} ms, client ${c.wall_ms} ms wall / ${c.cpu_ms} ms CPU / ${c.rss_mb} MB (anonymous ${c.rss_anon_mb} MB); warm ${c.warm.wall_ms} ms / ${c.warm.cpu_ms} ms CPU / ${c.warm.rss_mb} MB (anonymous ${c.warm.rss_anon_mb} MB) (load ${load.toFixed(2)})`,
      );
    }
    const med = (xs, f) => median(xs.map((x, i) => f(x, i)));
    const row = {
      rows,
      // Three decimals: a smoke run's file of a few thousand rows is well under 0.1 MB.
      file_mb: Math.round(statSync(input).size / 1e3) / 1e3,
      baseline: {
        wall_ms: med(base, (x) => x.wall_ms),
        cpu_ms: med(base, (x) => x.cpu_ms),
        rss_mb: med(base, (x) => x.rss_mb),
      },
      // The fair floor: reading the input and writing the output (35 columns, not 12), each a
      // csv-parse -> csv-stringify copy, measured in the same rounds as the client.
      floor: {
        wall_ms: med(base, (x, i) => x.wall_ms + client[i].output_copy.wall_ms),
        cpu_ms: med(base, (x, i) => x.cpu_ms + client[i].output_copy.cpu_ms),
        output_copy_wall_ms: med(client, (x) => x.output_copy.wall_ms),
        output_copy_cpu_ms: med(client, (x) => x.output_copy.cpu_ms),
      },
      load_1m: Math.round(med(client, (x) => x.load) * 100) / 100,
      client: {
        wall_ms: med(client, (x) => x.wall_ms),
        cpu_ms: med(client, (x) => x.cpu_ms),
        rss_mb: med(client, (x) => x.rss_mb),
        rss_mb_max: Math.max(...client.map((x) => x.rss_mb)),
        rss_anon_mb: med(client, (x) => x.rss_anon_mb ?? NaN),
        rss_anon_mb_max: Math.max(...client.map((x) => x.rss_anon_mb ?? NaN)),
        rss_file_mb: med(client, (x) => x.rss_file_mb ?? NaN),
        sandbox_cpu_ms: med(client, (x) => x.sandbox_cpu_ms ?? NaN),
        output_rows: Math.min(...client.map((x) => x.output_rows)),
      },
      requests: client[0].requests,
      // The same rows again after each cold run, every one from the results cache (issue 16).
      warm: {
        wall_ms: med(client, (x) => x.warm.wall_ms),
        cpu_ms: med(client, (x) => x.warm.cpu_ms),
        rss_mb: med(client, (x) => x.warm.rss_mb),
        rss_mb_max: Math.max(...client.map((x) => x.warm.rss_mb)),
        rss_anon_mb: med(client, (x) => x.warm.rss_anon_mb ?? NaN),
        rss_anon_mb_max: Math.max(...client.map((x) => x.warm.rss_anon_mb ?? NaN)),
        rss_file_mb: med(client, (x) => x.warm.rss_file_mb ?? NaN),
      },
    };
    if (withBefore) {
      row.before = {
        wall_ms: med(before, (x) => x.wall_ms),
        cpu_ms: med(before, (x) => x.cpu_ms),
        rss_mb: med(before, (x) => x.rss_mb),
      };
      row.before.ratio_wall = ratio(row.before.wall_ms, row.baseline.wall_ms);
    }
    row.ratio = {
      wall: ratio(row.client.wall_ms, row.baseline.wall_ms),
      cpu: ratio(row.client.cpu_ms, row.baseline.cpu_ms),
      // Against the floor (target: at most 1.5x); medians of per-round sums.
      floor_wall: ratio(row.client.wall_ms, row.floor.wall_ms),
      floor_cpu: ratio(row.client.cpu_ms, row.floor.cpu_ms),
      // How much faster the warm run is than the cold one (target: at least 3x at 1M rows).
      cold_over_warm_wall: ratio(row.client.wall_ms, row.warm.wall_ms),
      cold_over_warm_cpu: ratio(row.client.cpu_ms, row.warm.cpu_ms),
      // The run is two processes: the client's CPU plus the sandbox's, against the copy's.
      wall_per_row_us: Math.round((row.client.wall_ms * 1000) / rows),
    };
    // The results cache's own section, at the largest size (issue 16).
    if (rows === Math.max(...sizes))
      row.cache = await cacheRounds({
        bin: BIN,
        input,
        rows,
        work,
        limitMb: memoryLimitMb,
        recordMs: serviceRecordMs,
        log,
      });
    out.push(row);
    rmSync(input, { force: true });
  }
  return out;
}

async function startup() {
  const n = quick ? 5 : 15;
  const times = { node: [], version: [], help: [] };
  const once = async (args) => (await measureNode(args[0], args.slice(1))).wall_ms;
  const empty = join(ROOT, 'bench/lib/empty.js');
  for (let k = 0; k < n; k++) {
    times.node.push(await once([empty]));
    times.version.push(await once([BIN, '--version']));
    times.help.push(await once([BIN, '--help']));
  }
  const node = median(times.node);
  return {
    runs: n,
    node_ms: node,
    version_ms: median(times.version),
    help_ms: median(times.help),
    ratio_version: ratio(median(times.version), node),
    ratio_help: ratio(median(times.help), node),
  };
}

async function singleVsBulk(work) {
  const input = join(work, `contacts-single-${singleRows}.csv`);
  await writeContacts(input, singleRows);
  const sb = await startSandboxProcess();
  const output = join(work, 'single.csv');
  let single;
  let requests;
  try {
    single = await measureNode(join(ROOT, 'bench/single-loop.js'), [input, output], {
      env: { ENRICH_BASE_URL: sb.baseUrl, ENRICH_API_KEY: sb.apiKey },
    });
    if (single.code !== 0) throw new Error(`single loop failed: ${single.stderr}`);
    // Counted by the sandbox, not assumed: one POST /contact per row.
    requests = (await sb.stats()).requests_by_path?.['/contact'] ?? 0;
  } finally {
    await sb.close();
  }
  const loopRows = await countCsvRecords(output);
  if (loopRows !== singleRows)
    throw new Error(`single loop wrote ${loopRows} rows of ${singleRows}`);
  const bulk = await clientRun(work, input, singleRows, 'single');
  rmSync(input, { force: true });
  return {
    rows: singleRows,
    single_loop: {
      wall_ms: single.wall_ms,
      cpu_ms: single.cpu_ms,
      requests,
      output_rows: loopRows,
    },
    bulk: {
      wall_ms: bulk.wall_ms,
      cpu_ms: bulk.cpu_ms,
      requests: bulk.requests.total,
      output_rows: bulk.output_rows,
    },
    ratio_wall: ratio(single.wall_ms, bulk.wall_ms),
  };
}

ensureBuilt(flags.build);
// Loaded only now: it imports dist/, which ensureBuilt may just have rebuilt.
const { benchSandbox } = await import('./sandbox.js');
const work = mkdtempSync(join(tmpdir(), 'enrich-bench-'));
const machine = {
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model,
  mem_total_gb: Math.round(totalmem() / 2 ** 30),
  mem_free_gb: Math.round(freemem() / 2 ** 30),
  node: process.version,
  quick,
  runs,
};
try {
  log(`enrich benchmarks (${quick ? 'quick' : 'full'}; ${runs} run(s) each; median reported)`);
  log('start-up...');
  const start = await startup();
  log(
    `  node -e 0 ${start.node_ms} ms; --version ${start.version_ms} ms (${start.ratio_version}x); --help ${start.help_ms} ms (${start.ratio_help}x)`,
  );
  log('sandbox (in-process)...');
  const sandbox = await benchSandbox({ quick });
  log(
    `  bulk contacts ${sandbox.bulk_contacts.per_second}/s, companies ${sandbox.bulk_companies.per_second}/s; single /contact ${sandbox.single_contact_http.per_second} req/s`,
  );
  log('throughput (enrich contacts vs csv-parse -> csv-stringify copy)...');
  const tp = await throughput(work);
  for (const t of tp) {
    if (t.before) {
      log(
        `  ${t.rows} rows, before: wall ${t.before.wall_ms} ms (${t.before.ratio_wall}x), CPU ${t.before.cpu_ms} ms, RSS ${t.before.rss_mb} MB`,
      );
    }
    log(
      `  ${t.rows} rows: wall ${t.client.wall_ms} vs floor ${t.floor.wall_ms} ms (${t.ratio.floor_wall}x; vs input copy ${t.ratio.wall}x), CPU ${t.client.cpu_ms} vs floor ${t.floor.cpu_ms} ms (${t.ratio.floor_cpu}x), client peak RSS ${t.client.rss_mb} MB, requests ${t.requests.submits} submits + ${t.requests.polls} polls, load ${t.load_1m}`,
    );
  }
  const growth =
    tp.length >= 2
      ? {
          rss_ratio: ratio(tp[tp.length - 1].client.rss_mb, tp[0].client.rss_mb),
          rows_ratio: ratio(tp[tp.length - 1].rows, tp[0].rows),
          requests_ratio: ratio(tp[tp.length - 1].requests.total, tp[0].requests.total),
        }
      : undefined;
  if (growth)
    log(
      `  RSS(${tp[tp.length - 1].rows})/RSS(${tp[0].rows}) = ${growth.rss_ratio}; requests grow ${growth.requests_ratio}x for ${growth.rows_ratio}x rows`,
    );
  log(`single /contact loop vs bulk on ${singleRows} rows...`);
  const alt = await singleVsBulk(work);
  log(
    `  loop ${alt.single_loop.wall_ms} ms (${alt.rows} requests) vs bulk ${alt.bulk.wall_ms} ms (${alt.bulk.requests} requests): bulk is ${alt.ratio_wall}x faster`,
  );
  process.stdout.write(
    `${JSON.stringify({ machine, startup: start, sandbox, throughput: tp, growth, single_vs_bulk: alt })}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
