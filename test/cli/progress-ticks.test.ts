import { afterEach, describe, expect, it, vi } from 'vitest';
import { colorWanted } from '../../src/cli/globals.js';
import { createProgress, PLAIN_QUIET_MS } from '../../src/cli/progress.js';
import { createEstimator, describe as line, jobLine } from '../../src/cli/progress-text.js';
import type { RunProgress } from '../../src/pipeline/types.js';
import { FakeTerminal } from '../helpers/fake-terminal.js';

const waiting: RunProgress = {
  phase: 'waiting',
  rowsRead: 200_000,
  jobsTotal: 200,
  jobsDone: 0,
  creditsCharged: 0,
  rowsWritten: 0,
};

/** Any SGR sequence (colour, bold…): what NO_COLOR must keep off the screen. */
const SGR = new RegExp(String.raw`\u001B\[[\d;]*m`);

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

function onTerminal(): void {
  vi.useFakeTimers();
  vi.stubEnv('CI', undefined);
  vi.stubEnv('TERM', 'xterm-256color');
}

describe('progress while the run waits for its jobs', () => {
  it("ticks the spinner's clock though no progress comes for 12 s (a long job)", async () => {
    onTerminal();
    const term = new FakeTerminal(120);
    // The fake timers' clock: the view reads the time itself between updates.
    const view = await createProgress({ quiet: false, enabled: true, stream: term.asStream() });
    view.update(waiting);
    // Redrawn every 200 ms; ora draws the text at its next frame (every 80 ms).
    await vi.advanceTimersByTimeAsync(250);
    expect(term.visible()).toEqual([
      expect.stringMatching(/, jobs 0\/200, credits 0, 200ms, 0% done$/),
    ]);
    await vi.advanceTimersByTimeAsync(12_000);
    expect(term.visible()).toEqual([
      expect.stringMatching(/, jobs 0\/200, credits 0, 12\.2s, 0% done$/),
    ]);
    view.stop();
  });

  it('prints a plain line at least every 10 s off a terminal, through a 25 s job that reports nothing', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const stream = { isTTY: false, write: (s: string) => lines.push(s) > 0 };
    const view = await createProgress({
      quiet: false,
      enabled: true,
      stream: stream as unknown as NodeJS.WriteStream,
    });
    view.update(waiting);
    await vi.advanceTimersByTimeAsync(25_000);
    view.stop();
    expect(lines).toEqual([
      'enrich: waiting for results: 200,000 rows, jobs 0/200, credits 0, 0ms, 0% done\n',
      'enrich: waiting for results: 200,000 rows, jobs 0/200, credits 0, 10.0s, 0% done\n',
      'enrich: waiting for results: 200,000 rows, jobs 0/200, credits 0, 20.0s, 0% done\n',
    ]);
    expect(PLAIN_QUIET_MS).toBe(10_000);
    // Stopped: no more lines.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(lines).toHaveLength(3);
  });

  it('draws no colour with NO_COLOR or --no-color (color: false)', async () => {
    onTerminal();
    // Colour itself shows on a real terminal only (ora asks chalk, which looks at stdout):
    // test/e2e/progress-pty.test.ts checks both ways under a pseudo-terminal.
    const plain = new FakeTerminal(120);
    const view = await createProgress({
      quiet: false,
      enabled: true,
      color: false,
      stream: plain.asStream(),
    });
    view.update(waiting);
    await vi.advanceTimersByTimeAsync(1_000);
    view.stop();
    expect(plain.visible()).toEqual([]);
    expect(plain.writes.join('')).toContain('waiting for results');
    expect(plain.writes.join('')).not.toMatch(SGR);
  });

  it('reads NO_COLOR as no-color.org says: any non-empty value; also --no-color and TERM=dumb', () => {
    expect(colorWanted(undefined, {})).toBe(true);
    expect(colorWanted(undefined, { NO_COLOR: '' })).toBe(true);
    expect(colorWanted(undefined, { NO_COLOR: '1' })).toBe(false);
    expect(colorWanted(undefined, { NO_COLOR: 'false' })).toBe(false);
    expect(colorWanted(false, {})).toBe(false);
    expect(colorWanted(undefined, { TERM: 'dumb' })).toBe(false);
  });
});

describe('share done and time left', () => {
  it('has no share while reading (more rows may make more jobs), then counts jobs done and running', () => {
    const estimate = createEstimator();
    expect(estimate({ ...waiting, phase: 'reading' }, 0)).toEqual({});
    // 50 of 200 jobs done and two halfway (the service's 202 progress): 25.5%.
    expect(estimate({ ...waiting, jobsDone: 50, jobsRunning: 1 }, 1000).share).toBeCloseTo(0.255);
  });

  it('estimates the time left from the rate since the phase began, once 3 s and 1% have passed', () => {
    const estimate = createEstimator();
    expect(estimate({ ...waiting, jobsDone: 20 }, 0)).toEqual({ share: 0.1 });
    expect(estimate({ ...waiting, jobsDone: 40 }, 2_000)).toEqual({ share: 0.2 });
    // 10% more in the 10 s since the first share: the 80% left take 80 s.
    const est = estimate({ ...waiting, jobsDone: 40 }, 10_000);
    expect(est.leftMs).toBeCloseTo(80_000);
    expect(line({ ...waiting, jobsDone: 40 }, 25_000, est)).toBe(
      'waiting for results: 200,000 rows, jobs 40/200, credits 0, 25.0s, 20% done, about 1m 20s left',
    );
  });

  it('says how many rows are written while jobs still run, not once writing is the phase', () => {
    expect(line({ ...waiting, jobsDone: 40, rowsWritten: 40_000 }, 25_000)).toBe(
      'waiting for results: 200,000 rows, 40,000 written, jobs 40/200, credits 0, 25.0s',
    );
    expect(line({ ...waiting, phase: 'reading', rowsWritten: 1_000 }, 1_000)).toBe(
      'reading: 200,000 rows, 1,000 written, jobs 0/200, credits 0, 1.0s',
    );
    expect(line({ ...waiting, phase: 'writing', rowsWritten: 1_000 }, 1_000)).toBe(
      'writing: 1,000 of 200,000 rows, jobs 0/200, credits 0, 1.0s',
    );
  });

  it('says how many jobs answer 404 while they are polled again (a run with no progress says why)', () => {
    expect(line({ ...waiting, jobsDone: 1, jobsNotFound: 2 }, 4_000)).toBe(
      'waiting for results: 200,000 rows, jobs 1/200, 2 not found yet (404), credits 0, 4.0s',
    );
  });

  it('says how many rows it waits for while another enrich process sends them', () => {
    expect(line({ ...waiting, phase: 'reading', rowsHeldElsewhere: 20 }, 1_000)).toBe(
      'reading: 200,000 rows, jobs 0/200, waiting for 20 row(s) another enrich process is sending, credits 0, 1.0s',
    );
  });

  it('never goes back within a phase (a job counted done just before its running share is dropped)', () => {
    const estimate = createEstimator();
    expect(estimate({ ...waiting, jobsDone: 10, jobsRunning: 0.9 }, 0).share).toBeCloseTo(0.0545);
    expect(estimate({ ...waiting, jobsDone: 10 }, 100).share).toBeCloseTo(0.0545);
    // Writing is a phase of its own: rows written of rows read.
    const writing = { ...waiting, phase: 'writing' as const, jobsDone: 200, rowsWritten: 50_000 };
    expect(estimate(writing, 200).share).toBe(0.25);
  });
});

describe('-v: a line per job', () => {
  it('says when a job is submitted, done or sent again, and nothing on each poll', () => {
    expect(jobLine({ t: 'submitted', batch: '3', job: 'j-1', rows: 1000 })).toBe(
      'enrich: batch 3: submitted 1,000 rows as job j-1',
    );
    expect(jobLine({ t: 'done', batch: '3', job: 'j-1', records: 1000, credits: 950 })).toBe(
      'enrich: batch 3: job j-1 done: 1,000 records, 950 credits charged',
    );
    expect(jobLine({ t: 'retried', batch: '3', rows: 1000, reason: 'too-large' })).toBe(
      'enrich: batch 3: the service found its 1,000 rows too large; sending them again in two halves',
    );
    expect(jobLine({ t: 'retried', batch: '3', rows: 12, reason: 'out-of-credits' })).toBe(
      'enrich: batch 3: sending 12 rows again that came back out of credits',
    );
    expect(jobLine({ t: 'ended', batch: '3', job: 'j-1', state: 'timeout' })).toBe(
      'enrich: batch 3: job j-1 not downloaded: still running at the deadline (--timeout)',
    );
    const until = Date.UTC(2026, 11, 2, 20, 49, 1);
    expect(jobLine({ t: 'not-found', batch: '3', job: 'j-1', since: 0, until })).toBe(
      'enrich: batch 3: job j-1 answered 404 (not found); asked again until 2026-12-02T20:49:01Z',
    );
    expect(jobLine({ t: 'pending', batch: '3', job: 'j-1', processed: 5, total: 10 })).toBe(
      undefined,
    );
  });
});
