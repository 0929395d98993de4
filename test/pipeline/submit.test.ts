import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import {
  BLIND_SPLITS,
  createLimiter,
  isBatchTooLarge,
  splitReason,
} from '../../src/pipeline/run/submit.js';

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

describe('splitReason', () => {
  it('halves a batch the service said is too large, and any other 400 while the allowance lasts', () => {
    const fresh = () => ({ accepted: false, blind: 0 });
    const a = fresh();
    expect(splitReason(apiError(413, 'Payload Too Large'), 2, a)).toBe('too-large');
    expect(a.blind).toBe(0); // a said size costs no allowance
    expect(splitReason(apiError(400, 'Request rejected. Check: contacts'), 2, a)).toBe('refused');
    expect(a.blind).toBe(1);
    // One row is not halved; nor is what is no 400 (a 5xx, a 401, no answer).
    expect(splitReason(apiError(400, 'Request rejected.'), 1, a)).toBeUndefined();
    expect(splitReason(apiError(413, 'Payload Too Large'), 1, a)).toBeUndefined();
    expect(splitReason(apiError(500, 'boom'), 4, a)).toBeUndefined();
    expect(splitReason(apiError(401, 'no'), 4, a)).toBeUndefined();
    expect(splitReason(new Error('400'), 4, a)).toBeUndefined();
    expect(a.blind).toBe(1);
  });

  it('stops halving blind at BLIND_SPLITS until a submission of the run is accepted', () => {
    const spent = { accepted: false, blind: BLIND_SPLITS - 1 };
    expect(splitReason(apiError(400, 'x'), 8, spent)).toBe('refused');
    expect(splitReason(apiError(400, 'x'), 8, spent)).toBeUndefined();
    expect(spent.blind).toBe(BLIND_SPLITS);
    // A size the service names is halved whatever the allowance.
    expect(splitReason(apiError(413, 'Payload Too Large'), 8, spent)).toBe('too-large');
    spent.accepted = true;
    expect(splitReason(apiError(400, 'x'), 8, spent)).toBe('refused');
    expect(spent.blind).toBe(BLIND_SPLITS + 1);
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
