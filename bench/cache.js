// `npm run bench:cache [-- --rows N]`: the results cache, cold and warm (issue "Never pay
// twice"). Against one sandbox process (one account), the built CLI enriches N contacts:
//   cold     - an empty cache: every row is sent, and every answer is kept;
//   no-cache - the same rows as a new file with --no-cache: the cold run's cost without the cache;
//   warm     - the same rows as another new file: every row comes from the cache, none is sent.
// With --profile, a fourth run (cold again, into a new cache, under node --cpu-prof) measures
// what the target names: the CPU of the cache lookups (and of filling the cache, on
// the main thread) as a share of a cold run's CPU.
// Prints a human summary on stderr and one JSON object on stdout. Never fails on timing.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { writeContacts } from './lib/gen-contacts.js';
import { measureNode } from './lib/measure.js';
import { cacheTimes } from './lib/profile-share.js';
import { startSandboxProcess } from './lib/sandbox-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/enrich.js');
const log = (s) => process.stderr.write(`${s}\n`);
const at = process.argv.indexOf('--rows');
const rows = at > 0 ? Number(process.argv[at + 1]) : 100_000;
const profile = process.argv.includes('--profile');
if (!Number.isSafeInteger(rows) || rows < 1) {
  log('bench:cache: --rows expects a whole number');
  process.exit(2);
}
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  log('bench:cache: dist/ is not built: run `npm run build` first');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'enrich-bench-cache-'));
const sandbox = await startSandboxProcess();
try {
  const env = {
    ENRICH_BASE_URL: sandbox.baseUrl,
    ENRICH_API_KEY: sandbox.apiKey,
    ENRICH_STATE_DIR: join(dir, 'state'),
    ENRICH_CACHE_DIR: join(dir, 'cache'),
    ENRICH_CONFIG_DIR: join(dir, 'config'),
  };
  const input = join(dir, 'cold.csv');
  await writeContacts(input, rows);
  const run = async (name, file, extra = [], o = {}) => {
    const args = ['contacts', file, '-o', join(dir, `${name}-out.csv`), '-q', ...extra];
    const service = o.sandbox ?? sandbox;
    const before = (await service.stats()).credits_charged;
    const m = await measureNode(BIN, args, { env: { ...env, ...o.env }, nodeArgs: o.nodeArgs });
    if (m.code !== 0) throw new Error(`${name} run exited ${m.code}: ${m.stderr}`);
    const credits = (await service.stats()).credits_charged - before;
    log(
      `  ${name}: wall ${m.wall_ms} ms, CPU ${m.cpu_ms} ms, peak RSS ${m.rss_mb} MB (anonymous ${m.rss_anon_mb ?? '?'} MB, file-backed ${m.rss_file_mb ?? '?'} MB), credits ${credits}`,
    );
    return { ...m, credits, stderr: undefined };
  };
  log(`results cache, ${rows} contacts (one sandbox process, one account)`);
  const cold = await run('cold', input);
  const copy = (name) => {
    const file = join(dir, `${name}.csv`);
    copyFileSync(input, file);
    return file;
  };
  const noCache = await run('no-cache', copy('nocache'), ['--no-cache']);
  const warm = await run('warm', copy('warm'));
  // The sandbox keeps every job's results in memory: a fourth million rows is a new one's.
  if (profile) await sandbox.close();
  const profiled = profile ? await profiledCold(run, copy('profiled')) : undefined;
  const ratio = (a, b) => Math.round((a / b) * 100) / 100;
  const cacheBytes = readdirSync(env.ENRICH_CACHE_DIR).reduce(
    (n, f) => n + statSync(join(env.ENRICH_CACHE_DIR, f)).size,
    0,
  );
  log(
    `  cache files: ${Math.round(cacheBytes / 1e6)} MB (${Math.round(cacheBytes / rows)} bytes a row)`,
  );
  const summary = {
    rows,
    cold,
    no_cache: noCache,
    warm,
    cache_bytes: cacheBytes,
    warm_speedup_wall: ratio(cold.wall_ms, warm.wall_ms),
    warm_speedup_cpu: ratio(cold.cpu_ms, warm.cpu_ms),
    cache_share_of_cold_cpu: ratio(cold.cpu_ms - noCache.cpu_ms, cold.cpu_ms),
    ...(profiled && {
      profiled_cold: profiled,
      lookups_share_of_cold_cpu: ratio(profiled.lookups_ms, profiled.cpu_ms),
      fill_share_of_cold_cpu: ratio(profiled.fill_ms, profiled.cpu_ms),
    }),
  };
  log(
    `  warm is ${summary.warm_speedup_wall}x faster (wall), ${summary.warm_speedup_cpu}x (CPU); the cache costs ${Math.round(summary.cache_share_of_cold_cpu * 100)}% of a cold run's CPU`,
  );
  if (profiled)
    log(
      `  profiled cold run: the lookups take ${Math.round(summary.lookups_share_of_cold_cpu * 100)}% of its CPU, filling the cache ${Math.round(summary.fill_share_of_cold_cpu * 100)}% (main thread; lmdb's writer thread and the kernel's writes are in the difference to no-cache above)`,
    );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}

/** A cold run into a new, empty cache under --cpu-prof: its CPU, and the ms of the cache's lookups and fill in it. */
async function profiledCold(run, file) {
  const profDir = join(dir, 'profile');
  const service = await startSandboxProcess();
  const m = await run('profiled cold', file, [], {
    sandbox: service,
    env: {
      ENRICH_CACHE_DIR: join(dir, 'cache-profiled'),
      ENRICH_BASE_URL: service.baseUrl,
      ENRICH_API_KEY: service.apiKey,
    },
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir],
  }).finally(() => service.close());
  const [name] = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
  return { ...m, ...cacheTimes(join(profDir, name)) };
}
