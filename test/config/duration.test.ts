import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import { parseSetting } from '../../src/config/settings-table.js';

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

describe('durations a person types (flags, variables, enrich config set)', () => {
  it('a bare number other than 0 is refused: it would be milliseconds, never what was meant', () => {
    for (const prop of ['cacheMaxAgeMs', 'runRetentionMs', 'timeoutMs'] as const) {
      expect(() => parseSetting(prop, '30')).toThrow(
        /expected a duration with its unit, such as 30d, 30h, 30m or 30s, got "30"/,
      );
      expect(() => parseSetting(prop, ' 1.5 ')).toThrow(/with its unit/);
      expect(parseSetting(prop, '30s')).toBe(30_000);
    }
    expect(parseSetting('cacheMaxAgeMs', '0')).toBe(0);
    // What `enrich config set` wrote to the file: milliseconds, as a number.
    expect(parseSetting('cacheMaxAgeMs', 1_209_600_000)).toBe(1_209_600_000);
    // The library's parseDuration keeps reading a bare number as milliseconds.
    expect(parseDuration('250')).toBe(250);
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

describe('what the tool shows can be given back to it', () => {
  it('reads the compound durations formatDuration writes (`enrich config get timeout`: "1h 30m")', () => {
    for (const ms of [90 * 60_000, 7_200_000, 245_000, 36 * 3_600_000]) {
      const shown = formatDuration(ms);
      expect(parseSetting('timeoutMs', shown), shown).toBe(ms);
    }
    expect(parseSetting('timeoutMs', '2h 00m')).toBe(7_200_000);
    expect(parseSetting('timeoutMs', '1h30m')).toBe(5_400_000);
    expect(parseSetting('cacheMaxAgeMs', '1d 12h')).toBe(36 * 3_600_000);
    // Every part needs its unit.
    expect(() => parseSetting('timeoutMs', '1h 30')).toThrow(/expected a duration/);
  });
});
