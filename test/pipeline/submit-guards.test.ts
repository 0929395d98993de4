import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { createLimiter, isBatchTooLarge } from '../../src/pipeline/run/submit.js';

// What decides a split, and the bound on requests in flight (issue 21: survivors of
// submit.ts's mutation run). A batch wrongly split costs requests; one wrongly not split fails.

const bad = (message: string) =>
  new ApiError('API_VALIDATION', { status: 400, method: 'POST', path: '/contacts', message });

describe('isBatchTooLarge', () => {
  it.each([
    'max batch of 100 contacts',
    'too large: 20000 records in one request',
    'record limit reached',
    'contacts: at most 500 per request',
  ])('reads "%s" as a batch too large', (message) => {
    expect(isBatchTooLarge(bad(message))).toBe(true);
  });

  it('only an error the service answered counts, whatever its fields say', () => {
    expect(isBatchTooLarge(Object.assign(new Error('x'), { status: 413 }))).toBe(false);
  });
});

describe('createLimiter', () => {
  it('a slot freed with no one waiting is free again: later tasks still run side by side', async () => {
    const limit = createLimiter(2);
    await limit(async () => undefined);
    await limit(async () => undefined);
    let active = 0;
    let peak = 0;
    const task = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active--;
    };
    const all = Promise.all([limit(task), limit(task), limit(task)]);
    const stuck = new Promise((r) => setTimeout(() => r('stuck'), 1000));
    expect(await Promise.race([all.then(() => 'done'), stuck])).toBe('done');
    expect(peak).toBe(2);
  });
});
