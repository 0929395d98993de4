import { describe, expect, it } from 'vitest';
import type { LeafResult } from '../../src/pipeline/types.js';
import { countJobs, exitCodeFor, strongerStop } from '../../src/pipeline/run/summary.js';

const stats = {
  statuses: { enriched: 5, not_found: 0, failed: 0, invalid: 1, missing: 0, expired: 0 },
  fill: {},
  outputRows: 6,
};
const jobs = {
  total: 2,
  spooled: 2,
  failed: 0,
  unconfirmed: 0,
  expired: 0,
  pending: 0,
  unsent: 0,
  ids: ['a', 'b'],
  pendingExpire: null,
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

describe('strongerStop', () => {
  const credits = { code: 'CREDITS_EXHAUSTED', message: '--max-credits 250 reached' };
  const network = { code: 'NETWORK', message: 'connection reset' };
  const auth = { code: 'AUTH_INVALID', message: '401' };
  it('keeps the first reason unless a later one says more about the run', () => {
    expect(strongerStop(undefined, credits)).toBe(credits);
    // Reading ended past --max-credits, then every POST failed: the network is the story.
    expect(strongerStop(credits, network)).toBe(network);
    expect(strongerStop(network, credits)).toBe(network);
    expect(strongerStop(network, auth)).toBe(auth);
    expect(strongerStop(auth, network)).toBe(auth);
    const other = { code: 'NETWORK', message: 'another reset' };
    expect(strongerStop(network, other)).toBe(network);
    expect(strongerStop({ code: 'SOMETHING', message: 'x' }, credits)).toBe(credits);
  });
});

describe('countJobs', () => {
  const leaf = (id: string, state: LeafResult['state']): LeafResult => ({
    id,
    first: 0,
    last: 0,
    count: 1,
    state,
    jobId: `job-${id}`,
    credits: 0,
    remaining: null,
    creditError: false,
    polls: 0,
    submits: 0,
  });
  it('gives the earliest expiry of the jobs still pending, the deadline of a re-run', () => {
    const expires: Record<string, number | null> = { a: 5000, b: 9000, c: 7000, d: null };
    const leaves = [
      leaf('a', 'spooled'),
      leaf('b', 'pending'),
      leaf('c', 'pending'),
      leaf('d', 'pending'),
    ];
    const jobs = countJobs(leaves, (id) => expires[id]);
    expect(jobs).toMatchObject({ total: 4, spooled: 1, pending: 3, pendingExpire: 7000 });
    expect(countJobs(leaves).pendingExpire).toBeNull();
    expect(countJobs([leaf('a', 'spooled')], (id) => expires[id]).pendingExpire).toBeNull();
  });
  it("counts a spooled batch's unfinished credit retry as a job of its own", () => {
    const retried = {
      ...leaf('a', 'spooled'),
      retry: { state: 'pending' as const, batch: 'a.c1', jobId: 'job-a.c1' },
    };
    const dry = { ...leaf('b', 'spooled'), retry: { state: 'unsent' as const, batch: 'b.c1' } };
    const expires: Record<string, number> = { a: 9000, 'a.c1': 4000 };
    expect(countJobs([retried, dry], (id) => expires[id])).toMatchObject({
      total: 3,
      spooled: 2,
      pending: 1,
      unsent: 1,
      // The running job is the retry's: its id is listed, and its expiry is the one to beat.
      ids: ['job-a', 'job-a.c1', 'job-b'],
      pendingExpire: 4000,
    });
  });
});
