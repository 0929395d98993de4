import { describe, expect, it } from 'vitest';
import { fillLine, summaryJson, summaryText } from '../../../../src/cli/commands/bulk/report.js';
import type { RunSummary } from '../../../../src/pipeline/run/run.js';

const summary: RunSummary = {
  runKey: 'k',
  journal: '/state/runs/k/journal.jsonl',
  resumed: true,
  rows: 10,
  valid: 9,
  duplicates: 2,
  cacheHits: 0,
  creditsSaved: 0,
  jobs: {
    total: 2,
    spooled: 2,
    failed: 0,
    unconfirmed: 0,
    expired: 0,
    pending: 0,
    unsent: 0,
    ids: ['a', 'b'],
    pendingExpire: null,
  },
  requests: { submits: 2, polls: 3 },
  creditsCharged: 6,
  unconfirmedRows: 0,
  remainingCredits: 94,
  written: true,
  secondPassFrom: null,
  exitCode: 0,
  statuses: { enriched: 8, failed: 1, invalid: 1, missing: 0, expired: 0 },
  fill: {
    enriched_email: 8,
    enriched_title: 8,
    enriched_mobile_phone: 0,
    enriched_office_phone: 4,
  },
  outputRows: 10,
};

describe('bulk report', () => {
  it('groups fill rates by percentage, best first, without the prefix', () => {
    expect(
      fillLine(
        { enriched_email: 1, enriched_title: 1, enriched_mobile_phone: 0, enriched_phone: 0.5 },
        'enriched_',
      ),
    ).toBe('100% email, title; 50% phone; 0% mobile_phone');
  });

  it('summarises rows, statuses, duplicates, jobs, credits and fill on stderr', () => {
    const text = summaryText(summary, 61_000, 'enriched_');
    expect(text).toContain('rows: 10  enriched: 8  failed: 1  invalid: 1  missing: 0  expired: 0');
    expect(text).toContain(
      'duplicates sent once: 2  jobs: 2/2 done (resumed)  credits charged: 6  remaining: 94  time: 1m 01s',
    );
    expect(text).toContain('fill rate: 100% email, title; 50% office_phone; 0% mobile_phone');
  });

  it('has the same facts as JSON', () => {
    expect(summaryJson(summary, 1234)).toMatchObject({
      rows: 10,
      statuses: summary.statuses,
      duplicates: 2,
      jobs: { total: 2, done: 2, ids: ['a', 'b'] },
      credits_charged: 6,
      remaining_credits: 94,
      fill_rate: { enriched_email: 1, enriched_office_phone: 0.5, enriched_mobile_phone: 0 },
      elapsed_ms: 1234,
      exit_code: 0,
    });
  });
});
