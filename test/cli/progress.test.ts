import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';

const p = {
  phase: 'reading' as const,
  rowsRead: 12_000,
  jobsTotal: 3,
  jobsDone: 1,
  creditsCharged: 900,
  rowsWritten: 0,
};

afterEach(() => vi.restoreAllMocks());

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
      'enrich: writing: 6,000 of 12,000 rows, jobs 1/3, credits 900, 10.0s\n',
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
