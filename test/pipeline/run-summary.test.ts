import { describe, expect, it } from 'vitest';
import { exitCodeFor } from '../../src/pipeline/run-summary.js';

const stats = {
  statuses: { enriched: 5, failed: 0, invalid: 1, missing: 0, expired: 0 },
  fill: {},
  outputRows: 6,
};
const jobs = {
  total: 2,
  spooled: 2,
  failed: 0,
  expired: 0,
  pending: 0,
  unsent: 0,
  ids: ['a', 'b'],
};

describe('exitCodeFor', () => {
  it('is 0 when every job finished, whatever rows were not found or invalid', () => {
    expect(exitCodeFor(stats, jobs, undefined)).toBe(0);
  });
  it('is 3 when some batches failed, expired, are still running or were not sent', () => {
    for (const k of ['failed', 'expired', 'pending', 'unsent'] as const) {
      expect(exitCodeFor(stats, { ...jobs, [k]: 1 }, undefined)).toBe(3);
    }
  });
  it('ranks auth (4) over network (6) over credits (5) over partial (3)', () => {
    const partial = { ...jobs, failed: 1 };
    expect(exitCodeFor(stats, partial, { code: 'AUTH_INVALID' })).toBe(4);
    expect(exitCodeFor(stats, partial, { code: 'AUTH_FORBIDDEN' })).toBe(4);
    expect(exitCodeFor(stats, { ...partial, spooled: 0 }, { code: 'NETWORK' })).toBe(6);
    expect(exitCodeFor(stats, partial, { code: 'CREDITS_EXHAUSTED' })).toBe(5);
  });
  it('calls a network stop partial (3) once some jobs were downloaded', () => {
    expect(exitCodeFor(stats, { ...jobs, failed: 1 }, { code: 'NETWORK' })).toBe(3);
  });
});
