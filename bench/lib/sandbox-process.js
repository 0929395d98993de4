// Starts the sandbox in a SEPARATE process (`enrich sandbox --json`), reads its JSON line,
// and reads its admin stats; the benchmark never shares a process with the service.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, URL } from 'node:url';
import { fetch } from 'undici';

const BIN = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));

// Sandboxes still running: killed when this process exits, however it exits (an uncaught
// error, or a signal that bench/run.js turns into an exit), so no server outlives the bench.
const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts a zero-latency, unlimited sandbox; resolves {baseUrl, apiKey, stats(), close()}. */
export async function startSandboxProcess(extraArgs = []) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'sandbox',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--json',
      '--job-ms',
      '0',
      '--rate-limit',
      '0',
      '--credits',
      '100000000',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  live.add(child);
  child.once('exit', () => live.delete(child));
  const lines = createInterface({ input: child.stdout });
  let early;
  const first = await new Promise((res, rej) => {
    early = (c) => rej(new Error(`sandbox exited with ${c}`));
    child.on('error', rej);
    child.on('exit', early);
    lines.once('line', res);
  });
  const info = JSON.parse(first);
  if (new URL(info.base_url).hostname !== '127.0.0.1') {
    child.kill('SIGKILL');
    throw new Error(`the bench sandbox must listen on 127.0.0.1 only, got ${info.base_url}`);
  }
  const stats = async () => {
    const r = await fetch(`${info.base_url}/_sandbox/stats`, {
      headers: { authorization: `Bearer ${info.admin_token}` },
    });
    return r.json();
  };
  // CPU time of the sandbox process so far (Linux /proc; null elsewhere), in ms.
  const cpuMs = () => {
    try {
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks
    } catch {
      return null;
    }
  };
  const close = async () => {
    child.off('exit', early);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((res) => child.once('exit', res));
    child.kill('SIGTERM');
    await gone;
  };
  return { baseUrl: info.base_url, apiKey: info.api_key, stats, cpuMs, close };
}

/**
 * The environment of one client run against `sb`: its key and URL, and state, config and
 * results-cache directories of its own under `dir`, so no run resumes another and each
 * starts with an empty cache (the user's is neither read nor grown, and its mapped pages do
 * not count in the run's RSS).
 */
export function clientEnv(sb, dir) {
  return {
    ENRICH_BASE_URL: sb.baseUrl,
    ENRICH_API_KEY: sb.apiKey,
    ENRICH_STATE_DIR: join(dir, 'state'),
    ENRICH_CONFIG_DIR: join(dir, 'config'),
    ENRICH_CACHE_DIR: join(dir, 'cache'),
  };
}
