import { describe, expect, it } from 'vitest';
import { verifyPlanText } from '../../../../src/cli/commands/verify-emails/report.js';
import type { VerifyPlan } from '../../../../src/bulk/verify-emails.js';

const plan = (column: string): VerifyPlan => ({
  column,
  rows: 1,
  valid: 1,
  invalid: 0,
  empty: 0,
  malformed: 0,
  addresses: 1,
  duplicates: 0,
  cached: 0,
  unconfirmedEarlier: 0,
  sent: 1,
  overBudget: 0,
  maxCredits: 1,
});

describe('verify-emails --dry-run text', () => {
  it('shows a header cell holding a line break escaped, so the column cannot break the plan (as contacts --dry-run does)', () => {
    const text = verifyPlanText(plan('Work\nEmail\r\x07'), undefined);
    expect(text.split('\n')[0]).toBe('email column: "Work\\nEmail\\r\\u0007"');
    expect(text.split('\n')).toHaveLength(4);
  });
});
