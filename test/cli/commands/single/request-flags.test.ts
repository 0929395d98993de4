import { describe, expect, it } from 'vitest';
import { checkRequest } from '../../../../src/cli/commands/single/request-flags.js';
import { contactRequestSchema } from '../../../../src/contract/index.js';

const flags = {
  first_name: '--first-name',
  last_name: '--last-name',
  company_name: '--company-name',
};
const lookup = (first: string) =>
  checkRequest(
    'contact',
    contactRequestSchema,
    { first_name: first, last_name: 'Doe', company_name: 'Acme' },
    flags,
  );

describe('checkRequest', () => {
  // Session 25: the limit counts code points (as the bulk run's check now does), the message
  // counted UTF-16 units: 256 emoji were "got 512".
  it('says how many characters a value over the limit has, counted as the limit counts them', () => {
    expect(() => lookup('😀'.repeat(256))).toThrow(
      'contact: --first-name: expected at most 255 characters, got 256 (first_name)',
    );
    expect(lookup('😀'.repeat(200)).first_name).toBe('😀'.repeat(200));
  });
});
