import { describe, expect, it } from 'vitest';
import {
  closedOutputNote,
  fillLine,
  resumeHints,
  summaryJson,
  summaryText,
} from '../../../../src/cli/commands/bulk/report.js';
import type { RunSummary } from '../../../../src/pipeline/run/run.js';
import { closedVerifyNote } from '../../../../src/cli/commands/verify-emails/run.js';
import type { FileFormat } from '../../../../src/io/file-format.js';

const summary: RunSummary = {
  runKey: 'k',
  journal: '/state/runs/k/journal.jsonl',
  resumed: true,
  rows: 10,
  valid: 9,
  duplicates: 2,
  cacheHits: 0,
  creditsSaved: 0,
  cacheGone: 0,
  cacheResent: 0,
  heldOut: 0,
  unconfirmedEarlier: 0,
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
  creditsChargedEarlier: 0,
  unconfirmedRows: 0,
  chargeUnknownRows: 0,
  remainingCredits: 94,
  remainingCreditsAt: 1_700_000_000_000,
  balance: { first: 99, last: 94, drop: 5 },
  written: true,
  secondPassFrom: null,
  exitCode: 0,
  statuses: { enriched: 8, not_found: 0, failed: 1, invalid: 1, missing: 0, expired: 0 },
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
    expect(text).toContain(
      'rows: 10  enriched: 8  not found: 0  failed: 1  invalid: 1  missing: 0  expired: 0',
    );
    expect(text).toContain(
      'duplicates sent once: 2  jobs: 2/2 done (resumed)  credits charged: 6  remaining: 94  time: 1m 01s',
    );
    expect(text).toContain('fill rate: 100% email, title; 50% office_phone; 0% mobile_phone');
  });

  it("says the money the service's numbers show: earlier runs' charges apart, rows whose charge is unknown, a balance that dropped more", () => {
    const plain = summaryText(summary, 1000, 'enriched_');
    expect(plain).not.toMatch(/charge unknown|balance:/);
    const text = summaryText(
      {
        ...summary,
        creditsCharged: 0,
        creditsChargedEarlier: 36,
        chargeUnknownRows: 21,
        balance: { first: 120, last: 78, drop: 42 },
      },
      1000,
      'enriched_',
    );
    expect(text).toContain('credits charged: 0 (+36 by an earlier run)');
    expect(text).toContain('charge unknown: 21 rows were sent and their answer not seen');
    expect(text).toContain('balance: 120 -> 78 (-42) while the run ran');
  });

  it('has the same facts as JSON', () => {
    expect(summaryJson(summary, 1234)).toMatchObject({
      rows: 10,
      statuses: summary.statuses,
      duplicates: 2,
      jobs: { total: 2, done: 2, ids: ['a', 'b'] },
      credits_charged: 6,
      credits_charged_earlier: 0,
      charge_unknown_rows: 0,
      remaining_credits: 94,
      remaining_credits_at: '2023-11-14T22:13:20.000Z',
      balance: { first: 99, last: 94, drop: 5 },
      fill_rate: { enriched_email: 1, enriched_office_phone: 0.5, enriched_mobile_phone: 0 },
      elapsed_ms: 1234,
      exit_code: 0,
    });
  });
});

describe('what to run next after a stop for the service', () => {
  const stoppedBy = (code: string): RunSummary => ({
    ...summary,
    exitCode: 6,
    stopReason: { code, message: 'POST /contacts: …' },
  });

  it('a 429 stop says the service refused more for now, and to resume once its wait is over', () => {
    expect(
      resumeHints(stoppedBy('RATE_LIMITED'), 'enrich contacts a.csv', '', undefined, 'contacts'),
    ).toBe(
      'enrich: the service refused more requests for now (429 Too Many Requests); the journal is saved. Once the wait it asked for is over, resume with:\n  enrich contacts a.csv\n',
    );
  });

  it("a POST answered 404 names the endpoint of the run's kind in its hint", () => {
    expect(
      resumeHints(stoppedBy('API_NOT_FOUND'), 'enrich companies a.csv', '', undefined, 'companies'),
    ).toBe(
      'hint: check the base URL (--base-url, ENRICH_BASE_URL or `enrich config get base_url`): it is the address the endpoints hang from, so that POST <base URL>/companies reaches the service\n',
    );
    expect(
      resumeHints(stoppedBy('API_NOT_FOUND'), 'enrich contacts a.csv', '', undefined, 'contacts'),
    ).toMatch(/so that POST <base URL>\/contacts reaches the service\n$/);
  });

  it('a service out of reach says so, and to resume once it answers', () => {
    expect(
      resumeHints(stoppedBy('NETWORK'), 'enrich contacts a.csv', '', undefined, 'contacts'),
    ).toMatch(
      /^enrich: the service is out of reach or unavailable; .*Once it answers again, resume with:\n/,
    );
  });
});

describe('what a run writing to stdout says when its reader goes away', () => {
  it('nothing when the service accepted no job; else how many, and the command that writes them to a file', () => {
    expect(closedOutputNote(0, 'enrich contacts a.csv', 'csv')).toBe('');
    expect(closedOutputNote(1, 'enrich contacts a.csv', 'jsonl')).toBe(
      'enrich: the service had accepted 1 job of this run (their rows may be charged); the journal keeps them: the same command writing to a file downloads their answers without sending them again:\n  enrich contacts a.csv -o enriched.jsonl\n',
    );
    expect(closedOutputNote(1200, 'enrich contacts a.csv', 'csv')).toContain(
      'accepted 1,200 jobs of this run',
    );
  });
});

describe('what verify-emails writing to stdout says when its reader goes away', () => {
  it('names a file of the format stdout had: the --format asked, else that of the input, CSV for a workbook or stdin', () => {
    const file = (input: string, format?: FileFormat) =>
      /-o (verified\.\w+)\n$/.exec(closedVerifyNote('enrich verify-emails x', input, format))?.[1];
    expect(file('list.csv')).toBe('verified.csv');
    expect(file('list.jsonl.gz')).toBe('verified.jsonl');
    expect(file('list.xlsx')).toBe('verified.csv');
    expect(file('-')).toBe('verified.csv');
    expect(file('list.xlsx', 'xlsx')).toBe('verified.xlsx');
  });
});
