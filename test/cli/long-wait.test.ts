import { describe, expect, it } from 'vitest';
import { longWaitLine, printable } from '../../src/cli/long-wait.js';

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
    expect(longWaitLine({ ...wait, pastDeadline: true }, now)).toBe(
      'POST /contacts: 429 Too Many Requests: quota of jobs reached; the service asks to wait 1h 30m (until 2026-12-02T08:30:00Z), longer than this command may wait (--timeout): nothing more is sent to it now; run the same command after 2026-12-02T08:30:00Z',
    );
  });

  it("the service's words reach the terminal without control characters (no escape sequences)", () => {
    expect(printable('quota\u001b[2J\r\nreached\u0007\u009b')).toBe('quota?[2J??reached??');
    const line = longWaitLine(
      { ...wait, message: 'a\u001b]0;title\u0007b', pastDeadline: false },
      now,
    );
    expect(line).toMatch(/^a\?\]0;title\?b; the service asks/);
  });
});
