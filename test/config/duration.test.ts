import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1.5s', 1500],
    ['250', 250],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it('refuses junk with a usage error naming the option', () => {
    expect(() => parseDuration('soon', '--timeout')).toThrow(/--timeout: expected a duration/);
    expect(() => parseDuration('5 years')).toThrow(/expected a duration/);
  });
});

describe('formatDuration', () => {
  it('reads well at every scale', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_340)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m 05s');
    expect(formatDuration(7_380_000)).toBe('2h 03m');
  });
});
