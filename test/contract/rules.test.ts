import { describe, expect, it } from 'vitest';
import { expirationToMs } from '../../src/contract/rules.js';
import { resumeBy } from '../../src/pipeline/run/poll.js';

describe('expirationToMs', () => {
  it('reads seconds as a number or a string, and tolerates milliseconds', () => {
    expect(expirationToMs(1_800_000_000)).toBe(1_800_000_000_000);
    expect(expirationToMs(' 1800000000 ')).toBe(1_800_000_000_000);
    expect(expirationToMs(1_800_000_000_000)).toBe(1_800_000_000_000);
  });
  it('gives no expiry for what is not a time a Date can hold', () => {
    for (const v of ['', 'soon', 0, -5, Number.NaN, Number.MAX_SAFE_INTEGER, 1.8e18])
      expect(expirationToMs(v)).toBeUndefined();
  });
});

describe('resumeBy', () => {
  it('says by when to run again, or that the time has passed, and nothing without a usable expiry', () => {
    const at = Date.UTC(2026, 10, 21, 20, 0, 0);
    expect(resumeBy(at, at - 1)).toBe(
      " before 2026-11-21T20:00:00Z, when the job's results expire",
    );
    expect(resumeBy(at, at + 1)).toBe(
      " (the job's results were due to expire at 2026-11-21T20:00:00Z)",
    );
    expect(resumeBy(null, at)).toBe('');
    expect(resumeBy(9e15, at)).toBe('');
  });
});
