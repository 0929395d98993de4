import { describe, expect, it } from 'vitest';
import {
  decideFaults,
  faultProblems,
  parseFaultSpec,
  retryAfterValue,
} from '../../src/sandbox/faults.js';
import { createRandom } from '../../src/sandbox/hash.js';

describe('parseFaultSpec', () => {
  it('reads the compact form', () => {
    expect(
      parseFaultSpec(
        '500=0.05,429=0.05,reset=0.02,reset-after=0.01,truncate=0.01,latency=0-50,shuffle,drop-custom-fields,retry-after=http-date,retry-after-s=2,paths=/contacts|/company',
      ),
    ).toEqual({
      rates: { '500': 0.05, '429': 0.05 },
      reset_rate: 0.02,
      reset_after_rate: 0.01,
      truncate_rate: 0.01,
      latency_ms: [0, 50],
      shuffle_results: true,
      drop_custom_fields: true,
      retry_after: 'http-date',
      retry_after_s: 2,
      paths: ['/contacts', '/company'],
    });
    expect(parseFaultSpec('latency=20,drop-custom-fields=0.5,drop-records=0.1')).toEqual({
      latency_ms: 20,
      drop_custom_fields: 0.5,
      drop_records: 0.1,
    });
    expect(() => parseFaultSpec('drop-records=2')).toThrow(/drop_records: expected a rate/);
  });

  it('reads a JSON object', () => {
    expect(parseFaultSpec('{"rates":{"503":0.1},"next":[{"status":429}]}')).toEqual({
      rates: { '503': 0.1 },
      next: [{ status: 429 }],
    });
  });

  it.each([
    ['500=2', /rate between 0 and 1/],
    ['teapot=1', /unknown fault "teapot"/],
    ['latency=a-b', /latency/],
    ['reset', /reset=<number>/],
    ['{"rates":', /invalid JSON/],
    ['{"next":[{"status":200}]}', /next\[0\]\.status/],
    ['retry-after=soon', /retry_after/],
    ['200=0.1', /400-599/],
  ])('refuses %s with a usage error', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
    try {
      parseFaultSpec(spec);
    } catch (err) {
      expect(err).toMatchObject({ code: 'USAGE' });
    }
  });

  it('faultProblems names unknown keys', () => {
    expect(faultProblems({ nope: 1 })).toEqual(['nope: unknown fault']);
    expect(faultProblems([])).toEqual(['faults: expected a JSON object']);
  });
});

describe('decideFaults', () => {
  it('consumes the first matching next step and leaves the others', () => {
    const f = { next: [{ status: 503, path: '/contacts/results' }, { reset: true }] };
    const r = () => 0.5;
    expect(decideFaults(f, '/contact', r)).toMatchObject({ reset: true, status: undefined });
    expect(f.next).toEqual([{ status: 503, path: '/contacts/results' }]);
    expect(decideFaults(f, '/contacts/results/x.json', r)).toMatchObject({ status: 503 });
    expect(decideFaults(f, '/contact', r)).toEqual({
      delayMs: 0,
      retryAfter: 'seconds',
      retryAfterS: 1,
    });
  });

  it('applies the rates with the seeded randomness: about the rate, the same for the same seed', () => {
    const run = () => {
      const random = createRandom(42);
      let n = 0;
      for (let i = 0; i < 2000; i++)
        if (decideFaults({ rates: { '500': 0.1 } }, '/contact', random).status === 500) n++;
      return n;
    };
    const n = run();
    expect(n).toBe(run());
    expect(n).toBeGreaterThan(140);
    expect(n).toBeLessThan(260);
  });

  it('limits random faults to paths, and draws latency within bounds', () => {
    const always = () => 0;
    expect(
      decideFaults({ reset_rate: 1, paths: ['/contacts'] }, '/company', always).reset,
    ).toBeUndefined();
    expect(decideFaults({ reset_rate: 1, paths: ['/contacts'] }, '/contacts', always).reset).toBe(
      true,
    );
    expect(decideFaults({ reset_after_rate: 1 }, '/contacts', always).resetAfter).toBe(true);
    expect(decideFaults({ truncate_rate: 1 }, '/contacts', always).truncate).toBe(true);
    expect(decideFaults({ latency_ms: [10, 20] }, '/contact', () => 0.5).delayMs).toBe(15);
  });

  it('writes Retry-After as seconds or as an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(retryAfterValue('seconds', 2, now)).toBe('2');
    expect(retryAfterValue('http-date', 2, now)).toBe('Thu, 01 Jan 2026 00:00:02 GMT');
  });
});
