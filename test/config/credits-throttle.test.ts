import { describe, expect, it } from 'vitest';
import { throttledSink, type CreditsSeen } from '../../src/config/credits-memo.js';

describe('throttledSink (the credits memo of a run of single requests)', () => {
  it('writes the first balance at once, then the latest of each kind at most once a period, and the rest on flush', () => {
    const written: CreditsSeen[] = [];
    let t = 0;
    const memo = throttledSink(
      (s) => written.push(s),
      1000,
      () => t,
    );
    memo.onCredits({ kind: 'verification', remaining: 10, at: 1 });
    memo.onCredits({ kind: 'verification', remaining: 9, at: 2 });
    memo.onCredits({ kind: 'verification', remaining: 8, at: 3 });
    expect(written.map((s) => s.remaining)).toEqual([10]);
    t = 1000;
    memo.onCredits({ kind: 'verification', remaining: 7, at: 4 });
    expect(written.map((s) => s.remaining)).toEqual([10, 7]);
    memo.onCredits({ kind: 'enrichment', remaining: 50, at: 5 });
    memo.onCredits({ kind: 'verification', remaining: 6, at: 6 });
    memo.flush();
    // The latest of each kind, oldest answer first: the memo's time is the newest answer's.
    expect(written.slice(2).map((s) => [s.kind, s.remaining])).toEqual([
      ['enrichment', 50],
      ['verification', 6],
    ]);
  });
});
