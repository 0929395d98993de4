import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';
import { describe as runLine, describeVerify, verifyText } from '../../src/cli/progress-text.js';
import type { VerifyProgress } from '../../src/pipeline/verify/types.js';
import { FakeTerminal } from '../helpers/fake-terminal.js';

const p: VerifyProgress = {
  rowsRead: 3_000,
  rowsWritten: 2_000,
  rowsTotal: 10_000,
  addresses: 1_240,
  done: 1_234,
  sent: 1_100,
  creditsCharged: 1_050,
};

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe("verify-emails' progress line", () => {
  it('says rows, rows written, addresses done of found, sent and credits, every number as the bulk lines write them', () => {
    expect(describeVerify(p, 72_000)).toBe(
      'verifying: 10,000 rows, 2,000 written, addresses 1,234/1,240, sent 1,100, credits 1,050, 1m 12s',
    );
    // The bulk line writes its counters the same way (thousands separated), jobs and credits too.
    const bulk = {
      phase: 'waiting' as const,
      rowsRead: 200_000,
      jobsTotal: 2_000,
      jobsDone: 1_200,
      creditsCharged: 58_420,
      rowsWritten: 0,
    };
    expect(runLine(bulk, 1_000)).toBe(
      'waiting for results: 200,000 rows, jobs 1,200/2,000, credits 58,420, 1.0s',
    );
  });

  it('shows the rows read until the input is counted, and no share done before that', () => {
    const line = verifyText();
    const { rowsTotal: _, ...uncounted } = p;
    expect(line({ ...uncounted, rowsWritten: 0 }, 500, 500)).toBe(
      'verifying: 3,000 rows, addresses 1,234/1,240, sent 1,100, credits 1,050, 500ms',
    );
  });

  it('gives the share of rows written and, after 3 s and 1%, the time left at the rate seen', () => {
    const line = verifyText();
    expect(line({ ...p, rowsWritten: 1_000 }, 1_000, 1_000)).toMatch(/, 1\.0s, 10% done$/);
    // 10% more in 10 s: the 80% left take 80 s.
    expect(line({ ...p, rowsWritten: 2_000 }, 11_000, 11_000)).toBe(
      'verifying: 10,000 rows, 2,000 written, addresses 1,234/1,240, sent 1,100, credits 1,050, 11.0s, 20% done, about 1m 20s left',
    );
    // An empty input is done at once.
    expect(verifyText()({ ...p, rowsTotal: 0, rowsWritten: 0 }, 10, 10)).toMatch(/100% done$/);
  });
});

describe("verify-emails' progress view", () => {
  it('on a terminal: a spinner redrawn in place with the verify line, cleared on stop', async () => {
    vi.useFakeTimers();
    vi.stubEnv('CI', undefined);
    vi.stubEnv('TERM', 'xterm-256color');
    const term = new FakeTerminal(120);
    let t = 1_000_000;
    const view = await createProgress({
      quiet: false,
      enabled: true,
      now: () => t,
      stream: term.asStream(),
      line: verifyText(),
    });
    t += 2_000;
    view.update({ ...p, rowsWritten: 1_000 });
    await vi.advanceTimersByTimeAsync(250);
    expect(term.visible()).toEqual([
      expect.stringMatching(/^\S verifying: 10,000 rows, 1,000 written, .*, 2\.0s, 10% done$/),
    ]);
    // Many reports between two ticks (one per answer) draw the last one, over the same line.
    for (let i = 1_001; i <= 2_000; i++) view.update({ ...p, rowsWritten: i });
    t += 1_000;
    await vi.advanceTimersByTimeAsync(250);
    expect(term.visible()).toEqual([
      expect.stringMatching(/^\S verifying: 10,000 rows, 2,000 written, .*, 3\.0s, 20% done$/),
    ]);
    expect(term.writes.join('')).not.toContain('enrich: ');
    view.stop();
    expect(term.visible()).toEqual([]);
  });

  it('off a terminal: a plain line at once, then at most one every 5 s', async () => {
    const lines: string[] = [];
    const stream = { isTTY: false, write: (s: string) => lines.push(s) > 0 };
    let t = 1_000_000;
    const view = await createProgress({
      quiet: false,
      enabled: true,
      now: () => t,
      stream: stream as unknown as NodeJS.WriteStream,
      line: verifyText(),
    });
    t += 1_000;
    view.update({ ...p, rowsWritten: 1_000 });
    for (let i = 0; i < 40; i++) {
      t += 100;
      view.update({ ...p, rowsWritten: 1_000 + i });
    }
    t += 1_000;
    view.update(p);
    view.stop();
    expect(lines).toEqual([
      'enrich: verifying: 10,000 rows, 1,000 written, addresses 1,234/1,240, sent 1,100, credits 1,050, 1.0s, 10% done\n',
      'enrich: verifying: 10,000 rows, 2,000 written, addresses 1,234/1,240, sent 1,100, credits 1,050, 6.0s, 20% done, about 40s left\n',
    ]);
  });
});
