import { describe, expect, it } from 'vitest';
import { creditsExhaustedError } from '../../../../src/cli/commands/single/lookup.js';

const NO_CREDITS = 'Insufficient credits: the account has no enrichment credits left';

describe('creditsExhaustedError (in-band record errors of single lookups)', () => {
  it('turns a credits error into CREDITS_EXHAUSTED (exit 5), naming what was not enriched', () => {
    const e = creditsExhaustedError('contact', [NO_CREDITS], [true]);
    expect([e?.code, e?.exitCode, e?.message]).toEqual([
      'CREDITS_EXHAUSTED',
      5,
      `contact not enriched: ${NO_CREDITS}`,
    ]);
  });

  it('counts the matches a partial company answer left unenriched', () => {
    const e = creditsExhaustedError('company', ['', NO_CREDITS, NO_CREDITS], [false, true, true]);
    expect(e?.message).toBe(`2 of 3 company matches not enriched: ${NO_CREDITS}`);
    expect(e?.exitCode).toBe(5);
  });

  it('leaves records without errors, and errors that are not about credits, to exit 0', () => {
    expect(creditsExhaustedError('contact', [undefined])).toBeUndefined();
    expect(creditsExhaustedError('contact', [null])).toBeUndefined();
    expect(creditsExhaustedError('contact', [''])).toBeUndefined();
    expect(creditsExhaustedError('contact', ['No match found'])).toBeUndefined();
    expect(creditsExhaustedError('company', [])).toBeUndefined();
  });

  it('reads the shortage from the data (isCreditExhausted per record), never from the wording', () => {
    // "credit" in a message the data does not back is no shortage...
    expect(
      creditsExhaustedError('contact', ['credit card on file expired'], [false]),
    ).toBeUndefined();
    expect(creditsExhaustedError('contact', [NO_CREDITS])).toBeUndefined();
    // ...and a shortage the data shows counts whatever the words.
    const e = creditsExhaustedError('contact', ['quota reached'], [true]);
    expect([e?.code, e?.message]).toEqual([
      'CREDITS_EXHAUSTED',
      'contact not enriched: quota reached',
    ]);
  });
});
