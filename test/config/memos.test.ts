import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { creditsMemoSink, creditsScope, readCreditsMemo } from '../../src/config/credits-memo.js';
import { fileIdempotencyStore, IDEMPOTENCY_LESSON_MS } from '../../src/config/idempotency-memo.js';
import { deadPid } from '../helpers/pids.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';

const A = creditsScope('https://api.example/v1', 'a'.repeat(64));
const stateDir = () => join(mkdtempSync(join(tmpdir(), 'enrich-memo-')), 'state');

describe('creditsMemoSink', () => {
  it('keeps the last balance of each kind the service reported, with the time of the answer', () => {
    const dir = stateDir();
    const sink = creditsMemoSink(dir, 'default', A);
    sink({ kind: 'enrichment', remaining: 120, at: Date.UTC(2026, 0, 1) });
    sink({ kind: 'verification', remaining: 7, at: Date.UTC(2026, 0, 2) });
    sink({ kind: 'enrichment', remaining: 99, at: Date.UTC(2026, 0, 3) });
    expect(readCreditsMemo(dir, 'default', A)).toEqual({
      remaining_credits: 99,
      remaining_verification_credits: 7,
      at: '2026-01-03T00:00:00.000Z',
      scope: 'https://api.example/v1 a'.padEnd(39, 'a'),
    });
    expect(readCreditsMemo(dir, 'other', A)).toBeUndefined();
    // Another key's (or service's) balance is not this one's (regression: auth status showed
    // it): not read, and replaced when that one reports, never merged.
    const B = creditsScope('https://api.example', 'b'.repeat(64));
    expect(readCreditsMemo(dir, 'default', B)).toBeUndefined();
    creditsMemoSink(dir, 'default', B)({ kind: 'enrichment', remaining: 5, at: 0 });
    expect(readCreditsMemo(dir, 'default', B)).toEqual({
      remaining_credits: 5,
      at: '1970-01-01T00:00:00.000Z',
      scope: B,
    });
    expect(readCreditsMemo(dir, 'default', A)).toBeUndefined();
  });
});

describe('creditsScope', () => {
  const key = 'a'.repeat(64);

  it('is the base URL, normalised as requests are built from it, and the account', () => {
    const v1 = creditsScope('https://api.example/v1', key);
    for (const same of ['https://API.example:443/v1/', 'https://api.example/v1//'])
      expect(creditsScope(same, key)).toBe(v1);
    // Without a path: the origin alone, as every scope was before (those memos still read).
    expect(creditsScope('https://api.example/', key)).toBe(`https://api.example ${'a'.repeat(16)}`);
  });

  it("another path on the service's origin is another service: none of its balance (regression: a wrong …/v1 showed it)", () => {
    const dir = stateDir();
    const right = creditsScope('http://127.0.0.1:4010', key);
    creditsMemoSink(dir, 'default', right)({ kind: 'enrichment', remaining: 42, at: 0 });
    expect(readCreditsMemo(dir, 'default', right)?.remaining_credits).toBe(42);
    expect(readCreditsMemo(dir, 'default', creditsScope('http://127.0.0.1:4010/', key))).toEqual(
      readCreditsMemo(dir, 'default', right),
    );
    expect(
      readCreditsMemo(dir, 'default', creditsScope('http://127.0.0.1:4010/v1', key)),
    ).toBeUndefined();
  });
});

describe('fileIdempotencyStore', () => {
  it('remembers per scope what a service showed, across stores (runs), in a 0600 file', () => {
    const dir = stateDir();
    const first = fileIdempotencyStore(dir);
    expect(first.get('https://a.example/contacts')).toBeUndefined();
    first.set('https://a.example/contacts', true);
    first.set('https://b.example/contacts', false);
    const next = fileIdempotencyStore(dir);
    expect(next.get('https://a.example/contacts')).toBe(true);
    expect(next.get('https://b.example/contacts')).toBe(false);
    expect(next.get('https://a.example/companies')).toBeUndefined();
    expect(statSync(join(dir, 'idempotency.json')).mode & 0o777).toBe(0o600);
  });

  it('trusts what an earlier process learned for a day only, then learns again (regression: kept for ever)', () => {
    const dir = stateDir();
    let t = Date.UTC(2026, 0, 1);
    const clock = () => new Date(t);
    fileIdempotencyStore(dir, clock).set('s', true);
    t += IDEMPOTENCY_LESSON_MS - 1;
    expect(fileIdempotencyStore(dir, clock).get('s')).toBe(true);
    t += 1;
    const later = fileIdempotencyStore(dir, clock);
    expect(later.get('s')).toBeUndefined();
    // Shown again: trusted again, for another day (the same lesson, refreshed).
    later.set('s', true);
    expect(later.get('s')).toBe(true);
    expect(fileIdempotencyStore(dir, clock).get('s')).toBe(true);
    // A time in the future (a clock set back) or none readable: not trusted.
    t -= 2 * IDEMPOTENCY_LESSON_MS;
    expect(fileIdempotencyStore(dir, clock).get('s')).toBeUndefined();
  });

  it('reads a damaged file as nothing learned (lost answers are then not repeated)', async () => {
    const dir = stateDir();
    fileIdempotencyStore(dir).set('x', true);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'idempotency.json'), '{oops');
    expect(fileIdempotencyStore(dir).get('x')).toBeUndefined();
    expect(readFileSync(join(dir, 'idempotency.json'), 'utf8')).toBe('{oops');
  });
});

describe('memo files', () => {
  it("remove the temp file a killed writer left, and keep a live writer's", () => {
    const dir = stateDir();
    const sink = creditsMemoSink(dir, 'default', A);
    sink({ kind: 'enrichment', remaining: 5, at: Date.UTC(2026, 0, 1) });
    // A pid far above pid_max is no process; our own is alive.
    writeFileSync(join(dir, 'credits.json.99999999.tmp'), '{');
    writeFileSync(join(dir, `credits.json.${process.ppid}.tmp`), '{');
    writeFileSync(join(dir, 'idempotency.json.99999999.tmp'), '{');
    sink({ kind: 'enrichment', remaining: 4, at: Date.UTC(2026, 0, 2) });
    fileIdempotencyStore(dir).set('https://a.example/contacts', true);
    expect(readdirSync(dir).sort()).toEqual(
      [`credits.json.${process.ppid}.tmp`, 'credits.json', 'idempotency.json'].sort(),
    );
    expect(readCreditsMemo(dir, 'default', A)?.remaining_credits).toBe(4);
  });

  it("are swept of dead writers' temps when a command opens them, before anything is written", () => {
    // A run killed while it wrote a memo, resumed by one that has nothing left to ask the
    // service (every job downloaded): it never writes the memos again.
    const dir = stateDir();
    creditsMemoSink(dir, 'default', A)({ kind: 'enrichment', remaining: 5, at: 1 });
    const dead = deadPid();
    const left = [`credits.json.${dead}.tmp`, `idempotency.json.${dead}.tmp`];
    for (const f of [...left, `credits.json.${process.ppid}.tmp`]) writeFileSync(join(dir, f), '{');
    creditsMemoSink(dir, 'default', A);
    expect(readdirSync(dir)).not.toContain(left[0]);
    expect(readdirSync(dir)).toContain(left[1]);
    fileIdempotencyStore(dir);
    expect(readdirSync(dir).sort()).toEqual(['credits.json', `credits.json.${process.ppid}.tmp`]);
    // A state directory not made yet is no error.
    expect(() => creditsMemoSink(join(dir, 'none'), 'default', A)).not.toThrow();
  });

  rootTest(
    '(root: a tmpfs) on a full disk are not written, without an error, and leave no temp',
    async () => {
      await withTmpfs('size=64k', async (small) => {
        const dir = join(small, 'state');
        creditsMemoSink(dir, 'default', A)({ kind: 'enrichment', remaining: 5, at: 1 });
        writeFileSync(join(small, 'fill'), Buffer.alloc(60 * 1024));
        try {
          writeFileSync(join(small, 'fill2'), Buffer.alloc(64 * 1024));
        } catch {
          // full now
        }
        const big = creditsScope('https://api.example/' + 'x'.repeat(8000), 'a'.repeat(64));
        expect(() =>
          creditsMemoSink(dir, 'other', big)({ kind: 'enrichment', remaining: 4, at: 2 }),
        ).not.toThrow();
        expect(readdirSync(dir)).toEqual(['credits.json']);
        expect(readCreditsMemo(dir, 'default', A)?.remaining_credits).toBe(5);
      });
    },
  );
});
