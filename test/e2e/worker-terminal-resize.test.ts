import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt } from '../api/harness.js';

// Regression: a bulk run in a worker thread (Node 24) was told the terminal's width once, at
// start. A terminal made narrower mid-run then left every spinner redraw on the screen (each
// frame now wraps onto two lines, and the spinner, still counting 100 columns, cleared only
// the last), a pile of half lines, where the main thread redraws in place.

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const fixture = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
/** The cursor moved up a line: how the spinner clears a frame that took two lines. */
const CURSOR_UP = '\u001B[1A';

/**
 * `enrich contacts <fixture>` on a pseudo-terminal (util-linux `script`) 100 columns wide,
 * made 40 columns wide 1.5 s into the run (the job takes 3 s). Returns what the terminal was
 * sent after the resize, and the exit code.
 */
async function resizedMidRun(sandbox: SandboxHandle, dir: string, worker: '0' | '1') {
  const enrich = [process.execPath, bin, 'contacts', fixture].map(quote).join(' ');
  const out = quote(join(dir, `out-${worker}.csv`));
  const resize = `(sleep 1.5; stty cols 40 rows 30 </dev/tty; printf '\\n<resized>\\n') &`;
  const command = `stty cols 100 rows 30; ${resize} ${enrich} -o ${out}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      TERM: 'xterm-256color',
      ENRICH_WORKER: worker,
      ENRICH_BASE_URL: sandbox.url,
      ENRICH_API_KEY: sandbox.apiKey,
      ENRICH_CONFIG_DIR: join(dir, `config-${worker}`),
      ENRICH_STATE_DIR: join(dir, `state-${worker}`),
      ENRICH_CACHE_DIR: join(dir, `cache-${worker}`),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, screen, after: screen.split('<resized>')[1] ?? '' };
}

describe('a terminal resized during a bulk run (pseudo-terminal, built CLI)', () => {
  let sandbox: SandboxHandle;
  let dir = '';
  beforeAll(async () => {
    await ensureBuilt();
    sandbox = await startSandbox({ port: 0, jobMs: 3000 });
    dir = await mkdtemp(join(tmpdir(), 'enrich-resize-'));
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.concurrent.each([
    ['in the main thread', '0'],
    ['in a worker thread (as on Node 24)', '1'],
  ] as const)(
    'made narrower, the spinner %s clears the two lines each frame now takes',
    async (_where, worker) => {
      const r = await resizedMidRun(sandbox, dir, worker);
      expect(r.code, r.screen).toBe(0);
      // Frames were drawn after the resize, while the job still ran…
      expect(r.after, r.screen).toMatch(/waiting for results: 25 rows, jobs 0\/1/);
      // …and each was cleared whole: up to the line it started on, not only its last line.
      expect(r.after, r.screen).toContain(CURSOR_UP);
    },
    30_000,
  );
});
