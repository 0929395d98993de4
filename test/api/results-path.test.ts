import { describe, expect, it } from 'vitest';
import { resolveResultsTarget } from '../../src/api/results-path.js';
import { codeForStatus, errorForStatus, readErrorBody } from '../../src/api/http-error.js';

const base = new URL('https://api.example.com/v1');

describe('resolveResultsTarget', () => {
  it('builds the results path under the base path', () => {
    expect(resolveResultsTarget(base, 'contacts', 'j 1')).toEqual({
      path: '/v1/contacts/results/j%201.json',
      label: '/contacts/results/j%201.json',
      ignoredForeign: false,
    });
  });

  it('uses a same-origin download_url as is', () => {
    const t = resolveResultsTarget(
      base,
      'companies',
      'abc',
      'https://api.example.com/files/abc.json?sig=1',
    );
    expect(t).toEqual({
      path: '/files/abc.json?sig=1',
      label: '/files/abc.json',
      ignoredForeign: false,
    });
  });

  it.each([
    'https://evil.example.com/v1/contacts/results/abc.json',
    'http://api.example.com/v1/contacts/results/abc.json',
    'https://api.example.com:8443/v1/contacts/results/abc.json',
    'ftp://api.example.com/abc.json',
  ])('never follows a download_url on another origin: %s', (url) => {
    const t = resolveResultsTarget(base, 'contacts', 'abc', url);
    expect(t.path).toBe('/v1/contacts/results/abc.json');
    expect(t.ignoredForeign).toBe(true);
  });
});

describe('HTTP errors', () => {
  it('maps statuses to stable codes', () => {
    expect([400, 401, 403, 404, 413, 422, 429, 500, 503, 302].map((s) => codeForStatus(s))).toEqual(
      [
        'API_VALIDATION',
        'AUTH_INVALID',
        'AUTH_FORBIDDEN',
        'API_NOT_FOUND',
        'API_PAYLOAD_TOO_LARGE',
        'API_CONFLICT',
        'RATE_LIMITED',
        'SERVER_ERROR',
        'SERVER_ERROR',
        'MALFORMED_RESPONSE',
      ],
    );
  });

  it('reads the message and field errors of the error body', () => {
    const body = JSON.stringify({
      status: 400,
      error: 'Bad Request',
      message: 'invalid body',
      errors: [{ path: 'first_name', message: 'too long' }],
    });
    const e = errorForStatus({ method: 'POST', path: '/contact', status: 400, bodyText: body });
    expect(e.message).toBe('POST /contact: 400 Bad Request: invalid body');
    expect(e.fieldErrors).toEqual([{ path: 'first_name', message: 'too long' }]);
    expect(e.exitCode).toBe(2);
  });

  it('maps a 403 whose body code says credits ran out to CREDITS_EXHAUSTED (exit 5)', () => {
    // The body the sandbox answers POST /email-verification with when verification credits are gone.
    const body = JSON.stringify({
      status: 403,
      error: 'Forbidden',
      message: 'Verification credits exhausted: the account has no email verification credits left',
      code: 'verification_credits_exhausted',
    });
    const e = errorForStatus({
      method: 'POST',
      path: '/email-verification',
      status: 403,
      bodyText: body,
    });
    expect(e.code).toBe('CREDITS_EXHAUSTED');
    expect(e.exitCode).toBe(5);
    expect(e.status).toBe(403);
    expect(e.message).toBe(
      'POST /email-verification: 403 Forbidden: Verification credits exhausted: the account has no email verification credits left',
    );
    expect(codeForStatus(403, 'verification_credits_exhausted')).toBe('CREDITS_EXHAUSTED');
    expect(readErrorBody(body).code).toBe('verification_credits_exhausted');
  });

  it('keeps any other 403 an auth error (exit 4)', () => {
    const suspended = JSON.stringify({
      status: 403,
      error: 'Forbidden',
      message: 'Account acc_1 is suspended',
      code: 'account_suspended',
    });
    for (const bodyText of [suspended, '', '{"code":42}', 'forbidden']) {
      const e = errorForStatus({ method: 'POST', path: '/contact', status: 403, bodyText });
      expect([e.code, e.exitCode]).toEqual(['AUTH_FORBIDDEN', 4]);
    }
    // The body code only refines a 403: it does not turn other statuses into credits errors.
    expect(codeForStatus(401, 'verification_credits_exhausted')).toBe('AUTH_INVALID');
    expect(codeForStatus(429, 'verification_credits_exhausted')).toBe('RATE_LIMITED');
  });

  it('copes with bodies that are not the contract shape', () => {
    expect(readErrorBody('<html>gateway</html>')).toEqual({
      message: '<html>gateway</html>',
      fieldErrors: [],
    });
    expect(readErrorBody('')).toEqual({ fieldErrors: [] });
    expect(readErrorBody('{"error":"nope"}')).toEqual({ message: 'nope', fieldErrors: [] });
  });
});
