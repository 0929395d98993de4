import { describe, expect, it } from 'vitest';
import type { RowOutcome } from '../../src/pipeline/join/join.js';
import { duplicateOutcome } from '../../src/pipeline/join/write-joined.js';
import { cachedOutcome } from '../../src/pipeline/run/cache-use.js';
import type { CachedAnswer } from '../../src/pipeline/types.js';
import { apartFromTheirShape } from '../helpers/hidden-class.js';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';

const answer = (i: number): CachedAnswer => ({
  records:
    i % 3 === 0
      ? [{ error: 'no match', credit_charged: false }]
      : [{ error: '', credit_charged: i % 2 === 0, email: `e${i}@x.io`, n: i % 5 ? i : null }],
  at: 1_700_000_000_000 + i,
  charged: i % 3 !== 0,
});

describe('the outcome of a cached or a duplicate row', () => {
  it('says what the answer said, nothing charged now; a duplicate keeps its first copy’s answer and time', () => {
    const cached = cachedOutcome(answer(1), 'gone', CLI_WORDS);
    expect(cached).toStrictEqual({
      status: 'enriched',
      error: '',
      creditCharged: false,
      records: answer(1).records,
      cachedAt: 1_700_000_000_001,
    });
    expect(cachedOutcome(undefined, 'gone', CLI_WORDS)).toMatchObject({
      status: 'failed',
      error: 'gone',
    });
    // A mark of a request a run sent without its answer: failed, not sent, saying when and why.
    const mark = { records: [], at: Date.parse('2026-12-01T10:00:00Z'), charged: false };
    expect(cachedOutcome({ ...mark, unconfirmed: true }, 'gone', CLI_WORDS)).toStrictEqual({
      status: 'failed',
      error:
        'not sent: an enrich run sent this row at 2026-12-01T10:00:00Z and its answer never came (the service may have charged it), so it is not sent again by itself; --resend-unconfirmed sends it again (which may charge it twice)',
      creditCharged: null,
      records: [],
    });
    expect(duplicateOutcome(cached)).toStrictEqual(cached);
    const sent: RowOutcome = { status: 'enriched', error: '', creditCharged: true, records: [] };
    expect(duplicateOutcome(sent)).toStrictEqual({ ...sent, creditCharged: false });
    const unsent: RowOutcome = { ...sent, status: 'failed', creditCharged: null };
    expect(duplicateOutcome(unsent)).toStrictEqual(unsent);
  });

  it('made once per row, share one hidden class per set of fields (Node 20 gave spread copies a class each)', () => {
    const cached = Array.from({ length: 40_000 }, (_, i) =>
      cachedOutcome(answer(i), 'gone', CLI_WORDS),
    );
    const dups = cached.map((o, i) =>
      duplicateOutcome(i % 4 === 0 ? { ...o, creditCharged: null } : o),
    );
    expect(apartFromTheirShape(cached)).toEqual([]);
    expect(apartFromTheirShape(dups)).toEqual([]);
  });
});
