// Runs a node script as a child process and measures it: wall time (spawn to exit) in the
// parent; CPU and peak RSS of the child alone, reported by usage-preload.js from inside it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, URL } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./usage-preload.js', import.meta.url));

/**
 * Runs `[wrap] node [nodeArgs] script args`; resolves {wall_ms, cpu_ms, user_ms, system_ms, rss_mb,
 * code, stderr}, and on Linux the peaks of the child's anonymous and file-backed resident
 * memory apart (`rss_anon_mb`, `rss_file_mb`, sampled every 50 ms from /proc): a mapped file's
 * pages (an lmdb database) count in RSS but are page cache the kernel can take back.
 */
export async function measureNode(
  script,
  args,
  { env = {}, nodeArgs = [], stdout = 'ignore', wrap = [] } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'enrich-bench-usage-'));
  const usageFile = join(dir, 'usage.json');
  const t0 = performance.now();
  // `wrap`: a command that execs the rest (memory-limit.js: a shell that joins a cgroup first).
  const command = [...wrap, process.execPath, '--import', PRELOAD, ...nodeArgs, script, ...args];
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, ...env, BENCH_USAGE_FILE: usageFile },
    stdio: ['ignore', stdout, 'pipe'],
  });
  const memory = sampleMemory(child.pid);
  let stderr = '';
  child.stderr.on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  const code = await new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (c) => res(c));
  });
  const wall = performance.now() - t0;
  const peaks = memory.stop();
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
    ...peaks,
    code,
    stderr,
  };
}

/** Polls /proc/<pid>/status for RssAnon and RssFile; stop() gives their peaks (MB), {} off Linux. */
function sampleMemory(pid) {
  const peak = { anon: 0, file: 0 };
  let live = process.platform === 'linux' && pid !== undefined;
  const kb = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  const tick = async () => {
    while (live) {
      const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      peak.anon = Math.max(peak.anon, kb(text, 'RssAnon'));
      peak.file = Math.max(peak.file, kb(text, 'RssFile') + kb(text, 'RssShmem'));
      await sleep(50);
    }
  };
  void tick();
  const mb = (k) => Math.round((k / 1024) * 10) / 10;
  return {
    stop() {
      const sampled = live;
      live = false;
      return sampled ? { rss_anon_mb: mb(peak.anon), rss_file_mb: mb(peak.file) } : {};
    },
  };
}

/** Median of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
