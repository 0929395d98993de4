import { describe, expect, it } from 'vitest';
import { outcomeOfJournal } from '../../src/pipeline/verify/prior.js';
import type { VerifyState } from '../../src/pipeline/journal/verify-events.js';
import type { CachedAnswer, ResultsCache } from '../../src/pipeline/types.js';
import { LIBRARY_WORDS } from '../../src/pipeline/words.js';

// A request an earlier attempt journaled as sent, whose answer line never reached the journal
// (a full disk stopped the run as the answer came; a power cut lost the line): the attempt put
// the answer in the results cache before it journaled it.

const ADDRESS = 'jane@acme.com';
const SENT: VerifyState = { state: 'sent', at: 100 };
const verdict = { email: ADDRESS, status: 'valid', credit_charged: true, remaining_credits: 7 };
const answerAt = (at: number, extra: Partial<CachedAnswer> = {}): CachedAnswer => ({
  records: [{ ...verdict }],
  at,
  charged: true,
  ...extra,
});
const holding = (entry: CachedAnswer | undefined) =>
  ({ get: (key: string) => (key === ADDRESS ? entry : undefined) }) as unknown as ResultsCache;
const judge = (known: VerifyState | undefined, cache?: ResultsCache, resend = false) =>
  outcomeOfJournal(ADDRESS, known, resend, LIBRARY_WORDS, cache);

const LOST = { kind: 'failed', charge: 'unknown' };

describe('outcomeOfJournal: a request sent whose answer line was lost', () => {
  it('is answered by the answer the cache holds from its sending on, as charged as the cache says', () => {
    expect(judge(SENT, holding(answerAt(150)))).toEqual({
      kind: 'answered',
      answer: verdict,
      from: 'journal',
      at: 150,
    });
    expect(judge(SENT, holding(answerAt(100, { charged: false })))).toMatchObject({
      kind: 'answered',
      answer: { ...verdict, credit_charged: false },
      at: 100,
    });
  });

  it('stays "may have been charged" when the cache holds nothing of it: no cache, an older answer, a mark, an answer that carried an error, no verdict', () => {
    expect(judge(SENT)).toMatchObject(LOST);
    expect(judge(SENT, holding(undefined))).toMatchObject(LOST);
    expect(judge(SENT, holding(answerAt(99)))).toMatchObject(LOST);
    const mark = { records: [], at: 150, charged: false, unconfirmed: true };
    expect(judge(SENT, holding(mark))).toMatchObject(LOST);
    const failed = answerAt(150);
    failed.records = [{ ...verdict, error: 'mailbox check timed out' }];
    expect(judge(SENT, holding(failed))).toMatchObject(LOST);
    expect(judge(SENT, holding({ ...answerAt(150), records: [] }))).toMatchObject(LOST);
    expect(judge(SENT, holding({ ...answerAt(150), records: [{ email: ADDRESS }] }))).toMatchObject(
      LOST,
    );
  });

  it('a mark written over that answer later (its own resume marked it lost) leaves it the answer', () => {
    expect(judge(SENT, holding(answerAt(150, { unansweredAt: 200 })))).toMatchObject({
      kind: 'answered',
      at: 150,
    });
  });

  it('is answered so with --resend-unconfirmed too: it is not sent, nor paid, again', () => {
    expect(judge(SENT, holding(answerAt(150)), true)).toMatchObject({ kind: 'answered' });
    expect(judge(SENT, holding(undefined), true)).toBeUndefined();
  });

  it('an answer the journal holds, or a loss it journaled, is not read from the cache', () => {
    const journaled: VerifyState = {
      state: 'answered',
      answer: { status: 'invalid', charged: true, remaining: 3, at: 120 },
    };
    expect(judge(journaled, holding(answerAt(150)))).toMatchObject({
      kind: 'answered',
      answer: { status: 'invalid' },
      at: 120,
    });
    const lost: VerifyState = {
      state: 'failed',
      code: 'UNCONFIRMED',
      message: 'reset',
      unconfirmed: true,
    };
    expect(judge(lost, holding(answerAt(150)))).toMatchObject(LOST);
  });
});
