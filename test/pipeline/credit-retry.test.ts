import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/pipeline/types.js';
import {
  creditFailedItems,
  creditRetryId,
  isCreditRetry,
} from '../../src/pipeline/run/credit-retry.js';
import { ROW_FIELD } from '../../src/pipeline/join/join.js';

const item = (index: number, email: string): BatchItem => ({
  index,
  element: { business_email: email, custom_fields: { [ROW_FIELD]: index } },
  key: `contacts\u0001business_email=${email}`,
});
const record = (row: number | undefined, error: string, email: string) => ({
  error,
  credit_charged: error === '',
  ...(row === undefined ? {} : { custom_fields: { [ROW_FIELD]: row } }),
  original_fields: { business_email: email },
});
const OUT = 'Insufficient credits: the account has no credits left';

describe('credit retries (regression: after a top-up, rows that ran out of credits were never sent again)', () => {
  it('names retries after their batch and generation', () => {
    expect(creditRetryId('3.1', 2)).toBe('3.1.c2');
  });

  it('retries only rows whose every record the shortage left out (by row id, else by key), whatever the wording', () => {
    const items = [
      item(0, 'a@x.com'),
      item(1, 'b@x.com'),
      item(2, 'c@x.com'),
      item(3, 'd@x.com'),
      item(4, 'e@x.com'),
    ];
    const records = [
      record(0, '', 'a@x.com'), // enriched
      record(1, OUT, 'b@x.com'), // out of credits
      // Not charged and no data in a dry answer: a no-match cannot be told from a skipped row
      // (the spec promises no wording), so it is asked again; that charges nothing if still none.
      record(2, 'No match found', 'c@x.com'),
      record(undefined, OUT, 'd@x.com'), // out of credits, custom_fields dropped: found by key
      // row 4: no record at all (missing): not retried
    ];
    const dry = { records, remaining: 0 };
    expect(creditFailedItems('contacts', [dry], items).map((i) => i.index)).toEqual([1, 2, 3]);
    // Once a retry brought a good record, the row is done.
    const later = { records: [record(1, '', 'b@x.com')], remaining: 0 };
    expect(creditFailedItems('contacts', [dry, later], items).map((i) => i.index)).toEqual([2, 3]);
    // A record that was charged is never a shortage's, whatever its error says.
    const charged = { ...record(3, OUT, 'd@x.com'), credit_charged: true };
    expect(
      creditFailedItems('contacts', [{ records: [charged], remaining: 0 }], [item(3, 'd@x.com')]),
    ).toEqual([]);
  });

  it('a retry answered with credits left tells a no-match from a shortage: it is never sent again (regression: sent for ever after a top-up)', () => {
    const items = [item(0, 'a@x.com'), item(1, 'b@x.com'), item(2, 'c@x.com')];
    const dry = {
      records: [record(0, OUT, 'a@x.com'), record(1, OUT, 'b@x.com'), record(2, OUT, 'c@x.com')],
      remaining: 0,
    };
    // The retry of rows 0 and 1 came back with 3725 credits left: row 0 enriched, row 1 no match.
    const topped = {
      records: [record(0, '', 'a@x.com'), record(1, 'No match found', 'b@x.com')],
      remaining: 3725,
    };
    expect(creditFailedItems('contacts', [dry, topped], items).map((i) => i.index)).toEqual([2]);
    // A retry that showed the account dry again cannot tell them apart: row 1 is asked again.
    const dryAgain = { ...topped, remaining: 0 };
    expect(creditFailedItems('contacts', [dry, dryAgain], items).map((i) => i.index)).toEqual([
      1, 2,
    ]);
    // A row with a good record beside the shortage's (a company's matches cut short) is not
    // sent again: it would pay again for the match it has.
    const partly = {
      records: [record(0, '', 'a@x.com'), record(0, OUT, 'a@x.com'), record(1, OUT, 'b@x.com')],
      remaining: 0,
    };
    expect(creditFailedItems('contacts', [partly], items).map((i) => i.index)).toEqual([1]);
    // A balance not shown (null) is no shortage either.
    expect(
      creditFailedItems('contacts', [dry, { ...topped, remaining: null }], items).map(
        (i) => i.index,
      ),
    ).toEqual([2]);
  });
});

describe('credit retries of identical rows answered without row ids (--no-dedupe)', () => {
  // Regression: each twin was read with all of the twins' records, so a twin the job skipped
  // for credits beside one that got a match was never sent again.
  const twins = [item(0, 'a@x.com'), item(1, 'a@x.com'), item(2, 'a@x.com')];
  const ids = (attempts: Parameters<typeof creditFailedItems>[1], items = twins) =>
    creditFailedItems('contacts', attempts, items).map((i) => i.index);
  // Fresh records each time: an answer's copies are objects of their own.
  const matched = () => record(undefined, '', 'a@x.com');
  const short = () => record(undefined, OUT, 'a@x.com');

  it('one record to one twin: as many twins are sent again as records ran short', () => {
    expect(ids([{ records: [matched(), short()], remaining: 0 }], twins.slice(0, 2))).toEqual([1]);
    expect(ids([{ records: [matched(), short(), short()], remaining: 0 }])).toEqual([1, 2]);
    expect(ids([{ records: [matched(), matched(), short()], remaining: 0 }])).toEqual([2]);
    // A twin's short record that kept its row id: that twin is the one sent again.
    const shortOf0 = record(0, OUT, 'a@x.com');
    expect(ids([{ records: [shortOf0, matched()], remaining: 0 }], twins.slice(0, 2))).toEqual([0]);
  });

  it("a retry's answer counts for the twins it sent; dry again, one twin is sent once more", () => {
    const dry = { records: [matched(), short(), short()], remaining: 0 };
    // The retry of rows 1 and 2 answered both, one record with its row id, one without.
    const both = { records: [record(2, '', 'a@x.com'), matched()], remaining: 900 };
    expect(ids([dry, both])).toEqual([]);
    // Dry again for one of them: that one is sent again, never a twin that has its match.
    expect(ids([dry, { records: [matched(), short()], remaining: 0 }])).toEqual([2]);
    // With credits left, the record without data is a no-match: not sent again.
    const none = record(undefined, 'No match found', 'a@x.com');
    expect(ids([dry, { records: [matched(), none], remaining: 900 }])).toEqual([]);
  });
});

describe('isCreditRetry', () => {
  it('is true for a credit retry and its parts, and for no other batch', () => {
    for (const id of ['3.c1', '3.c12', '3.c1.0', '3.0.c2', '3.c1.0.1'])
      expect(isCreditRetry(id)).toBe(true);
    for (const id of ['3', '3.1', '3.0.1', 'c1', '3.cx', '3c1'])
      expect(isCreditRetry(id)).toBe(false);
  });
});
