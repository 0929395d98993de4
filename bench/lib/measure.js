// Runs a node script as a child process and measures it: wall time (spawn to exit) in the
// parent; CPU and peak RSS of the child alone, reported by usage-preload.js from inside it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, URL } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./usage-preload.js', import.meta.url));

/** Runs `node [nodeArgs] script args`; resolves {wall_ms, cpu_ms, user_ms, system_ms, rss_mb, code, stderr}. */
export async function measureNode(
  script,
  args,
  { env = {}, nodeArgs = [], stdout = 'ignore' } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'enrich-bench-usage-'));
  const usageFile = join(dir, 'usage.json');
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', PRELOAD, ...nodeArgs, script, ...args], {
    env: { ...process.env, ...env, BENCH_USAGE_FILE: usageFile },
    stdio: ['ignore', stdout, 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  const code = await new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (c) => res(c));
  });
  const wall = performance.now() - t0;
  let usage = { user_ms: NaN, system_ms: NaN, max_rss_kb: NaN };
  try {
    usage = JSON.parse(readFileSync(usageFile, 'utf8'));
  } catch {
    // the child died before its exit hook ran: report NaN
  }
  rmSync(dir, { recursive: true, force: true });
  return {
    wall_ms: Math.round(wall),
    cpu_ms: Math.round(usage.user_ms + usage.system_ms),
    user_ms: Math.round(usage.user_ms),
    system_ms: Math.round(usage.system_ms),
    rss_mb: Math.round((usage.max_rss_kb / 1024) * 10) / 10,
    code,
    stderr,
  };
}

/** Median of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
