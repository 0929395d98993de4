import { describe, expect, it } from 'vitest';
import { isVerificationAnswer } from '../../src/api/results-check.js';
import { emailVerificationResponseSchema } from '../../src/contract/responses.js';

const good = { email: 'a@b.com', status: 'valid', credit_charged: true, remaining_credits: 9 };

describe('isVerificationAnswer (the zod-free check of a verification answer)', () => {
  it('is true only for answers the schema takes unchanged', () => {
    const samples: unknown[] = [
      good,
      { ...good, status: 'unknown', error: null },
      { ...good, error: 'quota' },
      { ...good, extra: { nested: 1 } },
      { ...good, status: 'maybe' },
      { ...good, credit_charged: 'true' },
      { ...good, remaining_credits: '9' },
      { ...good, remaining_credits: Infinity },
      { ...good, error: 3 },
      { status: 'valid', credit_charged: true, remaining_credits: 1 },
      [good],
      null,
      'valid',
    ];
    for (const body of samples) {
      const parsed = emailVerificationResponseSchema.safeParse(body);
      const fast = isVerificationAnswer(body);
      // Never true where zod would refuse or change the value.
      if (fast) expect(parsed.success && parsed.data).toEqual(body);
      expect(fast).toBe(parsed.success);
    }
  });
});
