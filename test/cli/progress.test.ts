import { execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProgress, inCi, rowsMayShow } from '../../src/cli/progress.js';
import { FakeTerminal } from '../helpers/fake-terminal.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

const p = {
  phase: 'reading' as const,
  rowsRead: 12_000,
  jobsTotal: 3,
  jobsDone: 1,
  creditsCharged: 900,
  rowsWritten: 0,
};

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('progress when stderr is not a terminal', () => {
  it('prints one plain line at most every 5 seconds', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => lines.push(String(s)) > 0);
    let t = 1_000_000;
    const view = await createProgress({ quiet: false, enabled: true, now: () => t });
    t += 5_000;
    view.update(p);
    t += 1_000;
    view.update(p);
    t += 4_000;
    view.update({ ...p, phase: 'writing', rowsWritten: 6_000 });
    view.stop();
    expect(lines).toEqual([
      'enrich: reading: 12,000 rows, jobs 1/3, credits 900, 5.0s\n',
      'enrich: writing: 6,000 of 12,000 rows, jobs 1/3, credits 900, 10.0s, 50% done\n',
    ]);
  });

  it('is silent with --quiet or --no-progress', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    for (const o of [
      { quiet: true, enabled: true },
      { quiet: false, enabled: false },
    ]) {
      const view = await createProgress({ ...o, now: () => 1e9 });
      view.update(p);
      view.stop();
    }
    expect(write).not.toHaveBeenCalled();
  });
});

/** A terminal session: not CI, a terminal that can move its cursor. */
function onTerminal(): void {
  vi.useFakeTimers();
  vi.stubEnv('CI', undefined);
  vi.stubEnv('TERM', 'xterm-256color');
}

/** The progress view of a run drawing on `term` (a terminal session unless told otherwise). */
function viewOn(term: FakeTerminal, o: { quiet?: boolean; now?: () => number } = {}) {
  return createProgress({
    quiet: o.quiet ?? false,
    enabled: true,
    now: o.now ?? (() => 1e9),
    stream: term.asStream(),
  });
}

describe('progress on a terminal', () => {
  it('shows an ora spinner line with rows, jobs, credits and elapsed time, redraws it in place, and clears it on stop', async () => {
    onTerminal();
    const term = new FakeTerminal(120);
    let t = 1_000_000;
    const view = await viewOn(term, { now: () => t });
    expect(term.visible()).toEqual([expect.stringMatching(/^\S starting, 0ms$/)]);
    expect(term.cursorHidden).toBe(true);

    t += 5_000;
    view.update(p);
    await vi.advanceTimersByTimeAsync(250);
    expect(term.visible()).toEqual([
      expect.stringMatching(/^\S reading: 12,000 rows, jobs 1\/3, credits 900, 5\.0s$/),
    ]);

    t += 4_000;
    view.update({ ...p, phase: 'writing', jobsDone: 3, creditsCharged: 2_700, rowsWritten: 6_000 });
    await vi.advanceTimersByTimeAsync(250);
    // Redrawn over the same line, not appended below it (the plain path appends).
    expect(term.visible()).toEqual([
      expect.stringMatching(
        /^\S writing: 6,000 of 12,000 rows, jobs 3\/3, credits 2,700, 9\.0s, 50% done$/,
      ),
    ]);
    expect(term.writes.join('')).not.toContain('enrich: ');

    view.stop();
    expect(term.visible()).toEqual([]);
    expect(term.cursorHidden).toBe(false);
    // Stopped means stopped: no more frames drawn later.
    const written = term.writes.length;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(term.writes.length).toBe(written);
  });

  it.each([
    { why: 'CI is set', env: { CI: 'true' }, columns: 120 },
    { why: 'the terminal is dumb', env: { TERM: 'dumb' }, columns: 120 },
    { why: 'the terminal reports no width', env: {}, columns: undefined },
    { why: 'the terminal reports a width of 0', env: {}, columns: 0 },
  ])('prints plain lines instead of a spinner when $why', async ({ env, columns }) => {
    onTerminal();
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    const term = new FakeTerminal(columns);
    let t = 1_000_000;
    const view = await viewOn(term, { now: () => t });
    t += 5_000;
    view.update(p);
    await vi.advanceTimersByTimeAsync(1_000);
    view.stop();
    expect(term.writes).toEqual(['enrich: reading: 12,000 rows, jobs 1/3, credits 900, 5.0s\n']);
    expect(term.cursorMoves).toBe(0);
  });

  it.each(['', 'false', '0', 'FALSE'])(
    'draws the spinner when CI is %j (not a CI run; ora alone would refuse)',
    async (ci) => {
      onTerminal();
      vi.stubEnv('CI', ci);
      const term = new FakeTerminal(120);
      const view = await viewOn(term);
      view.update(p);
      await vi.advanceTimersByTimeAsync(250);
      expect(term.visible()).toEqual([expect.stringMatching(/^\S reading: 12,000 rows/)]);
      view.stop();
      expect(term.cursorMoves).toBeGreaterThan(0);
    },
  );

  it('reads CI the way CI services and `CI=false` mean it', () => {
    expect(inCi({})).toBe(false);
    for (const off of ['', ' ', '0', 'false', 'False']) expect(inCi({ CI: off })).toBe(false);
    for (const on of ['true', '1', 'yes', 'woodpecker']) expect(inCi({ CI: on })).toBe(true);
  });

  it('writes a warning above the spinner without tearing it, and even with --quiet', async () => {
    onTerminal();
    const term = new FakeTerminal(120);
    const view = await viewOn(term);
    view.update(p);
    await vi.advanceTimersByTimeAsync(250);
    view.note('enrich: warning: leads.csv changed since a run of it started');
    await vi.advanceTimersByTimeAsync(250);
    expect(term.visible()).toEqual([
      'enrich: warning: leads.csv changed since a run of it started',
      expect.stringMatching(/^\S reading: 12,000 rows/),
    ]);
    view.stop();
    expect(term.visible()).toEqual([
      'enrich: warning: leads.csv changed since a run of it started',
    ]);

    const quiet = new FakeTerminal(120);
    const silent = await viewOn(quiet, { quiet: true });
    silent.note('enrich: warning: x');
    expect(quiet.writes.join('')).toBe('enrich: warning: x\n');
  });

  it('stays silent on a terminal with --quiet', async () => {
    onTerminal();
    const term = new FakeTerminal(120);
    const view = await viewOn(term, { quiet: true });
    view.update(p);
    await vi.advanceTimersByTimeAsync(1_000);
    view.stop();
    expect(term.writes).toEqual([]);
  });
});

describe('progress of a real bulk run, stderr a pipe (e2e, built CLI)', () => {
  beforeAll(ensureBuilt, 120_000);
  const input = fileURLToPath(new URL('../../fixtures/contacts.csv', import.meta.url));
  // The 25-row fixture finishes in well under 5 s: the first update prints, later ones wait.
  const LINE =
    /^enrich: (reading: 25 rows|waiting for results: 25 rows|writing: \d+ of 25 rows)(, \d+ written)?, jobs [01]\/1, credits \d+, \d[\w. ]*(, \d+% done)?(, about \d[\w ]* left)?$/;

  async function run(flags: string[]) {
    const env = await tempEnv();
    const root = dirname(env.ENRICH_STATE_DIR ?? '');
    try {
      const out = join(root, 'out.csv');
      const r = await runCli(['contacts', input, '--sandbox', '-o', out, ...flags], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect((await readFile(out, 'utf8')).trimEnd().split('\n')).toHaveLength(26);
      return r.stderr.split('\n').filter((l) => l !== '');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  it('prints the plain progress line before the summary', async () => {
    const lines = await run([]);
    const progress = lines.filter((l) => l.startsWith('enrich: '));
    // One line, or more on a machine so loaded that the run outlasts the 5 s interval.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const l of progress) expect(l).toMatch(LINE);
    expect(lines.join('\n')).not.toContain('\u001B');
    const summary = lines.findIndex((l) => l.startsWith('rows: 25 '));
    expect(summary).toBeGreaterThan(lines.indexOf(progress[0] ?? ''));
  });

  it('prints nothing on stderr with --quiet, and the summary alone with --no-progress', async () => {
    expect(await run(['--quiet'])).toEqual([]);
    const lines = await run(['--no-progress']);
    expect(lines.filter((l) => l.startsWith('enrich: '))).toEqual([]);
    expect(lines[0]).toMatch(/^rows: 25 /);
  });
});

describe('rows that may show on the terminal: no spinner over them', () => {
  it('prints plain lines on a terminal, without moving the cursor, when the rows may show there', async () => {
    onTerminal();
    const term = new FakeTerminal(120);
    let t = 1_000_000;
    const view = await createProgress({
      quiet: false,
      enabled: true,
      now: () => t,
      stream: term.asStream(),
      rowsMayShow: true,
    });
    t += 5_000;
    view.update(p);
    await vi.advanceTimersByTimeAsync(1_000);
    view.note('enrich: warning: x');
    view.stop();
    expect(term.writes).toEqual([
      'enrich: reading: 12,000 rows, jobs 1/3, credits 900, 5.0s\n',
      'enrich: warning: x\n',
    ]);
    expect(term.cursorMoves).toBe(0);
    expect(term.cursorHidden).toBe(false);
  });

  it('tells a pipe, a socket or a terminal (may show) from a file or /dev/null (no screen)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-shows-'));
    try {
      const file = join(dir, 'out.csv');
      await writeFile(file, '');
      expect(rowsMayShow(file)).toBe(false);
      expect(rowsMayShow(join(dir, 'not-yet.csv'))).toBe(false);
      expect(rowsMayShow('/dev/null')).toBe(false);
      const fifo = join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      expect(rowsMayShow(fifo)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('asks standard output by descriptor: a pipe may show, a file and /dev/null do not', async () => {
    await ensureBuilt();
    const dir = await mkdtemp(join(tmpdir(), 'enrich-shows-'));
    const module = pathToFileURL(
      fileURLToPath(new URL('../../dist/cli/progress.js', import.meta.url)),
    );
    const probe = `import(${JSON.stringify(module.href)}).then((m) => process.stderr.write(String(m.rowsMayShow(undefined))))`;
    const ask = (stdout: 'pipe' | 'ignore' | number) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['-e', probe], { stdio: ['ignore', stdout, 'pipe'] });
        let said = '';
        child.stderr?.on('data', (d: Buffer) => (said += d.toString()));
        child.on('close', () => resolve(said));
      });
    try {
      const fd = openSync(join(dir, 'out.csv'), 'w');
      try {
        expect(await ask(fd)).toBe('false');
      } finally {
        closeSync(fd);
      }
      expect(await ask('ignore')).toBe('false');
      expect(await ask('pipe')).toBe('true');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
