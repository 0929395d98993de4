// `npm run bench:verify [-- --rows N --concurrency C --latency MS --rate R]`: `enrich
// verify-emails` on N distinct addresses against a sandbox process whose answers take MS ms
// (its latency fault, `--faults latency=MS`). Two runs, each with a fresh journal and no cache:
//   concurrency - bounded only by the latency and --concurrency: the bound is N x MS / C;
//   rate-limit  - with --rate-limit R as well: the bound is N / R seconds.
// Each run's target is 1.3x its bound. First, the floor: the same requests from a bare
// undici Pool (bench/lib/verify-floor.js), which separates the tool's cost from the machine's. Prints a human summary on stderr and one JSON object on
// stdout (wall, CPU, peak RSS, verification credits charged, the bound and the target). Never
// fails on timing: the numbers go to BENCHMARKS.md with the machine's load.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';
import { measureNode } from './lib/measure.js';
import { startSandboxProcess } from './lib/sandbox-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/enrich.js');
const log = (s) => process.stderr.write(`${s}\n`);

/** `--name value` as a whole number >= 1, or the default. */
function flag(name, fallback) {
  const at = process.argv.indexOf(name);
  if (at < 0) return fallback;
  const text = process.argv[at + 1] ?? '';
  if (!/^[1-9]\d*$/.test(text)) {
    log(`bench:verify: ${name} expects a whole number >= 1, got "${text}"`);
    process.exit(2);
  }
  return Number(text);
}

const rows = flag('--rows', 10_000);
const concurrency = flag('--concurrency', 16);
const latency = flag('--latency', 20);
const rate = flag('--rate', 200);
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  log('bench:verify: dist/ is not built: run `npm run build` first');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'enrich-bench-verify-'));
const input = join(dir, 'list.csv');
const lines = ['id,name,email'];
for (let i = 0; i < rows; i++) lines.push(`${i},Person ${i},person${i}@company${i % 997}.com`);
writeFileSync(input, `${lines.join('\n')}\n`);

const sandbox = await startSandboxProcess([
  '--verification-credits',
  String(rows * 4),
  '--faults',
  `latency=${latency}`,
]);
try {
  const run = async (name, extra, boundMs) => {
    const env = {
      ENRICH_BASE_URL: sandbox.baseUrl,
      ENRICH_API_KEY: sandbox.apiKey,
      // A fresh journal each run: the same command would otherwise resume the last one.
      ENRICH_STATE_DIR: join(dir, name, 'state'),
      ENRICH_CACHE_DIR: join(dir, name, 'cache'),
      ENRICH_CONFIG_DIR: join(dir, name, 'config'),
    };
    const args = ['verify-emails', input, '-o', join(dir, `${name}.csv`), '-q', '--no-cache'];
    const before = (await sandbox.stats()).verification_credits_charged;
    const load = loadavg()[0];
    const m = await measureNode(BIN, [...args, '--concurrency', String(concurrency), ...extra], {
      env,
    });
    if (m.code !== 0) throw new Error(`${name} run exited ${m.code}: ${m.stderr}`);
    const credits = (await sandbox.stats()).verification_credits_charged - before;
    const target = Math.round(boundMs * 1.3);
    const result = {
      ...m,
      stderr: undefined,
      credits,
      bound_ms: Math.round(boundMs),
      target_ms: target,
      met: m.wall_ms <= target,
      load_1m: Math.round(load * 100) / 100,
    };
    log(
      `  ${name}: wall ${m.wall_ms} ms (bound ${result.bound_ms}, target ${target}: ${result.met ? 'met' : 'MISSED'}), CPU ${m.cpu_ms} ms, peak RSS ${m.rss_mb} MB, credits ${credits}, load ${result.load_1m}`,
    );
    return result;
  };
  log(
    `verify-emails, ${rows} distinct addresses, answers take ${latency} ms, --concurrency ${concurrency}`,
  );
  const floorLoad = loadavg()[0];
  const floor = await measureNode(
    fileURLToPath(new URL('./lib/verify-floor.js', import.meta.url)),
    [sandbox.baseUrl, sandbox.apiKey, String(rows), String(concurrency)],
  );
  floor.stderr = undefined;
  floor.load_1m = Math.round(floorLoad * 100) / 100;
  log(
    `  floor (bare undici Pool, same sandbox): wall ${floor.wall_ms} ms, CPU ${floor.cpu_ms} ms, load ${floor.load_1m}`,
  );
  const free = await run('concurrency', [], (rows * latency) / concurrency);
  const limited = await run('rate-limit', ['--rate-limit', String(rate)], (rows / rate) * 1000);
  process.stdout.write(
    `${JSON.stringify({ rows, latency_ms: latency, concurrency, rate_limit: rate, floor, concurrency_run: free, rate_limit_run: limited }, null, 2)}\n`,
  );
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
