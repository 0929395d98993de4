import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { createLimiter, isBatchTooLarge } from '../../src/pipeline/run/submit.js';

const apiError = (
  status: number,
  message: string,
  fieldErrors: { path: string; message: string }[] = [],
) =>
  new ApiError(status === 413 ? 'API_PAYLOAD_TOO_LARGE' : 'API_VALIDATION', {
    status,
    method: 'POST',
    path: '/contacts',
    message,
    fieldErrors,
  });

describe('isBatchTooLarge', () => {
  it('recognises 413 and 400s about the number of records', () => {
    expect(isBatchTooLarge(apiError(413, 'POST /contacts: 413 Payload Too Large'))).toBe(true);
    expect(isBatchTooLarge(apiError(400, 'too many contacts: at most 10000 per request'))).toBe(
      true,
    );
    expect(
      isBatchTooLarge(
        apiError(400, 'Bad Request', [
          { path: 'contacts', message: 'exceeds the limit of 500 records' },
        ]),
      ),
    ).toBe(true);
  });
  it('does not mistake other 400s or errors for size', () => {
    expect(isBatchTooLarge(apiError(400, 'contacts[3].first_name: too long'))).toBe(false);
    expect(isBatchTooLarge(apiError(500, 'too many records'))).toBe(false);
    expect(isBatchTooLarge(new Error('413'))).toBe(false);
  });
});

describe('createLimiter', () => {
  it('never runs more than max tasks at once', async () => {
    const limit = createLimiter(2);
    let active = 0;
    let peak = 0;
    const task = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active--;
    };
    await Promise.all(Array.from({ length: 10 }, () => limit(task)));
    expect(peak).toBe(2);
  });
});
