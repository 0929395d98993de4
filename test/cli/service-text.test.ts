import { describe, expect, it } from 'vitest';
import { longWaitLine } from '../../src/cli/long-wait.js';
import { keyValueLines, printable, warningLine } from '../../src/cli/output.js';
import { describeError } from '../../src/cli/report-error.js';
import { ApiError } from '../../src/errors.js';

const now = Date.UTC(2026, 11, 2, 7, 0, 0);
const wait = {
  method: 'POST',
  path: '/contacts',
  until: now + 90 * 60_000,
  message: 'POST /contacts: 429 Too Many Requests: quota of jobs reached',
};

describe('the warning for a 429 that asks for a long wait', () => {
  it('within the deadline: how long, until when, and that Ctrl-C stops and the same command resumes', () => {
    expect(longWaitLine({ ...wait, pastDeadline: false }, now)).toBe(
      'POST /contacts: 429 Too Many Requests: quota of jobs reached; the service asks to wait 1h 30m (until 2026-12-02T08:30:00Z): waiting (Ctrl-C stops; the same command resumes)',
    );
  });

  it('past the deadline: nothing more is sent now, and when to run the command again', () => {
    expect(longWaitLine({ ...wait, pastDeadline: true }, now)).toMatch(
      /, longer than this command may wait: nothing more is sent/,
    );
    expect(longWaitLine({ ...wait, pastDeadline: true }, now, '--timeout')).toBe(
      'POST /contacts: 429 Too Many Requests: quota of jobs reached; the service asks to wait 1h 30m (until 2026-12-02T08:30:00Z), longer than this command may wait (--timeout): nothing more is sent to it now; run the same command after 2026-12-02T08:30:00Z',
    );
  });

  it("the service's words reach the terminal without control characters (no escape sequences)", () => {
    expect(printable('quota\u001b[2J\r\nreached\u0007\u009b\t.')).toBe('quota?[2J?\nreached??\t.');
    const line = longWaitLine(
      { ...wait, message: 'a\u001b]0;title\u0007b', pastDeadline: false },
      now,
    );
    expect(line).toMatch(/^a\?\]0;title\?b; the service asks/);
  });
});

describe("a service's words on stderr", () => {
  it('an error the service answered, its field errors and hint, print without escape sequences, exit code kept', () => {
    const err = new ApiError('API_VALIDATION', {
      status: 400,
      method: 'POST',
      path: '/contact',
      message: 'POST /contact: 400 Bad Request: bad\u001b]0;owned\u0007 input',
      fieldErrors: [{ path: 'first_name\u001b[2K', message: 'too\rlong' }],
    });
    const { text, exitCode } = describeError(err, false);
    expect(text).toBe(
      'enrich: POST /contact: 400 Bad Request: bad?]0;owned? input [API_VALIDATION]\n  first_name?[2K: too?long',
    );
    expect(exitCode).toBe(2);
  });

  it('a POST answered 404 (no such endpoint at the base URL) hints at the base URL, naming that endpoint', () => {
    const err = new ApiError('API_NOT_FOUND', {
      status: 404,
      method: 'POST',
      path: '/email-verification',
      message: 'POST /email-verification: 404 Not Found',
    });
    expect(describeError(err, false).text).toBe(
      'enrich: POST /email-verification: 404 Not Found [API_NOT_FOUND]\nhint: check the base URL (--base-url, ENRICH_BASE_URL or `enrich config get base_url`): it is the address the endpoints hang from, so that POST <base URL>/email-verification reaches the service',
    );
  });

  it('a warning line alike', () => {
    expect(warningLine('row 3: "\u001b[31mred"')).toBe('enrich: warning: row 3: "?[31mred"');
  });
});

describe("a single lookup's answer as key/value lines", () => {
  it('keeps one line per key: line breaks as \\n, tabs as a space, no escape sequence (regression: a description over two lines broke the view, and escapes reached the terminal)', () => {
    expect(
      keyValueLines({
        first_name: 'Ann',
        company: { description: 'Line one\r\nline two\tand\u001b[2Kthree', size: null },
        tags: ['a\nb'],
      }),
    ).toBe(
      [
        'first_name           Ann',
        'company.description  Line one\\nline two and?[2Kthree',
        'company.size         ',
        'tags                 ["a\\nb"]',
        '',
      ].join('\n'),
    );
    expect(keyValueLines({})).toBe('');
  });
});
