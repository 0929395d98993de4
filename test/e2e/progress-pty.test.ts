import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt } from '../api/harness.js';

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const fixture = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
/** Any SGR sequence (colour, bold…). */
const SGR = new RegExp(String.raw`\u001B\[[\d;]*m`);
/** The text of one frame of verify-emails' spinner (up to the next escape sequence or line end). */
const FRAME = new RegExp(String.raw`verifying: 25 rows, [^\r\n\u001B]*`, 'g');
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `enrich <args>` (`enrich contacts <fixture>` by default) under a real pseudo-terminal
 * (util-linux `script`), 100 columns wide, against `sandbox`, its rows written with `-o
 * <dir>/out.csv`, or by the shell to that file (`>`), or to stdout piped to `cat`, which prints
 * them on the same terminal (`| cat`: no file, no exit code of enrich's). Returns everything the
 * terminal was sent, and the rows in the file.
 */
async function onTerminal(
  sandbox: SandboxHandle,
  dir: string,
  env: Record<string, string>,
  args = ['contacts', fixture],
  to: '-o' | '>' | '| cat' = '-o',
) {
  await mkdir(dir, { recursive: true });
  const out = join(dir, 'out.csv');
  const enrich = [process.execPath, bin, ...args].map(quote).join(' ');
  const tail = to === '-o' ? `-o ${quote(out)}` : to === '>' ? `> ${quote(out)}` : '| cat';
  const command = `stty cols 100 rows 30; ${to === '| cat' ? '' : 'exec '}${enrich} ${tail}`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      TERM: 'xterm-256color',
      ENRICH_BASE_URL: sandbox.url,
      ENRICH_API_KEY: sandbox.apiKey,
      ENRICH_CONFIG_DIR: join(dir, 'config'),
      ENRICH_STATE_DIR: join(dir, 'state'),
      ENRICH_CACHE_DIR: join(dir, 'cache'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.on('data', (d: Buffer) => (screen += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const written = to === '| cat' ? '' : await readFile(out, 'utf8');
  return { code, screen, rows: written.trimEnd().split('\n').length };
}

/** The elapsed times the spinner showed while the one job was still running. */
function clockWhileWaiting(screen: string): string[] {
  const seen = [
    ...screen.matchAll(/waiting for results: 25 rows, jobs 0\/1, credits 0, ([\d.]+m?s)/g),
  ];
  return [...new Set(seen.map((m) => m[1] ?? ''))];
}

// The cases run side by side (`it.concurrent`): they mostly wait on jobs and answers, and each
// has its own terminal, directories and (but the first) sandbox.
describe('progress on a real terminal during a long job (pseudo-terminal, built CLI)', () => {
  let sandbox: SandboxHandle;
  let dir = '';
  beforeAll(async () => {
    await ensureBuilt();
    // Every job takes 3 s: the run waits with nothing new to report.
    sandbox = await startSandbox({ port: 0, jobMs: 3000 });
    dir = await mkdtemp(join(tmpdir(), 'enrich-pty-'));
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.concurrent(
    "ticks the spinner's clock while the job runs, in colour; NO_COLOR=1 draws it without any colour",
    async () => {
      const [coloured, plain] = await Promise.all([
        onTerminal(sandbox, join(dir, 'a'), {}),
        onTerminal(sandbox, join(dir, 'b'), { NO_COLOR: '1' }),
      ]);
      for (const r of [coloured, plain]) {
        expect(r.code, r.screen).toBe(0);
        expect(r.rows).toBe(26);
        // The clock moved on while the counters stood still: about every 200 ms over 3 s.
        expect(clockWhileWaiting(r.screen).length, r.screen).toBeGreaterThanOrEqual(5);
        expect(r.screen).toMatch(/rows: 25 {2}enriched: 23 /);
      }
      expect(coloured.screen).toMatch(SGR);
      expect(plain.screen).not.toMatch(SGR);
    },
  );

  // Verification answers take 100 ms, two at a time: the fixture's 15 addresses take 0.8 s or more.
  it.concurrent.each([
    ['in the main thread', {}],
    ['in a worker thread (as on Node 24: the terminal is passed in)', { ENRICH_WORKER: '1' }],
  ])(
    'verify-emails shows the spinner with its own counters, redrawn in place, %s',
    async (_where, env) => {
      const slow = await startSandbox({ port: 0, faults: { latency_ms: 100 } });
      try {
        const args = ['verify-emails', fixture, '--concurrency', '2'];
        const r = await onTerminal(slow, join(dir, `v${Object.keys(env).length}`), env, args);
        expect(r.code, r.screen).toBe(0);
        expect(r.rows).toBe(26);
        const frames = new Set(r.screen.match(FRAME));
        // Redrawn with new counters as the answers come, never printed as a plain line.
        expect(frames.size, r.screen).toBeGreaterThanOrEqual(2);
        expect(r.screen).not.toContain('enrich: verifying');
        expect(r.screen).toMatch(/addresses \d+\/\d+, sent \d+, credits \d+, /);
        expect(r.screen).toMatch(/rows: 25 {2}valid: /);
      } finally {
        await slow.close();
      }
    },
  );

  // `enrich … | cat`: cat prints the rows on the terminal the spinner draws on, and a redraw
  // would put a row and the progress on one line. Plain whole lines instead, as curl (no meter
  // when its data goes to the terminal) and npm (progress only when stdout is a terminal too).
  it.concurrent.each([
    ['contacts', ['contacts', fixture], {}],
    ['verify-emails', ['verify-emails', fixture, '--concurrency', '2'], {}],
    ['verify-emails in a worker thread', ['verify-emails', fixture], { ENRICH_WORKER: '1' }],
  ])(
    '%s with its rows piped to cat on the same terminal: plain progress lines between whole rows, no spinner',
    async (what, args, env) => {
      const slow = await startSandbox({ port: 0, jobMs: 1000, faults: { latency_ms: 100 } });
      try {
        const r = await onTerminal(slow, join(dir, `cat-${what}`), env, args, '| cat');
        expect(r.code, r.screen).toBe(0);
        // No spinner: no frame, no cursor hidden or moved back over a line.
        expect(r.screen).not.toMatch(/[\u2800-\u28ff]/);
        expect(r.screen).not.toContain('\u001B[?25l');
        expect(r.screen).not.toMatch(new RegExp(String.raw`\u001B\[\d*G`));
        const lines = r.screen.split(/\r?\n/);
        const progress = lines.filter((l) => /waiting for results|verifying:/.test(l));
        expect(progress.length, r.screen).toBeGreaterThanOrEqual(1);
        for (const l of progress) expect(l).toMatch(/^enrich: (waiting for results|verifying): /);
        // Every row whole, on a line of its own: the header and the 25 rows.
        expect(lines.filter((l) => l.startsWith('Contact ID,First Name,'))).toHaveLength(1);
        expect(lines.filter((l) => /^C-10\d\d,/.test(l))).toHaveLength(25);
        expect(r.screen).toMatch(/\nrows: 25 {2}/);
      } finally {
        await slow.close();
      }
    },
  );

  it.concurrent(
    'keeps the spinner when stdout is a file (`> out.csv`): no row can show on the terminal',
    async () => {
      const slow = await startSandbox({ port: 0, faults: { latency_ms: 100 } });
      try {
        const args = ['verify-emails', fixture, '--concurrency', '2'];
        const r = await onTerminal(slow, join(dir, 'redirected'), {}, args, '>');
        expect(r.code, r.screen).toBe(0);
        expect(r.rows).toBe(26);
        expect(new Set(r.screen.match(FRAME)).size, r.screen).toBeGreaterThanOrEqual(2);
        expect(r.screen).not.toContain('enrich: verifying');
      } finally {
        await slow.close();
      }
    },
  );
});
