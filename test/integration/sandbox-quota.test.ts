import { afterEach, describe, expect, it } from 'vitest';
import { resolveSandboxOptions } from '../../src/sandbox/start.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});
async function start(o: SandboxOptions) {
  sb = await startSandbox(o);
  return sb;
}

/** `n` contacts no one matches, each carrying `pad` bytes of custom_fields (the attack, scaled). */
function noMatches(n: number, pad: number, from = 0) {
  return Array.from({ length: n }, (_, i) =>
    contact(from + i, {
      first_name: 'Nomatch',
      custom_fields: { row: from + i, pad: 'p'.repeat(pad) },
    }),
  );
}

describe('sandbox: per-account storage caps', () => {
  it('an account with 0 credits cannot store results for free past the unpaid cap: 429, nothing kept', async () => {
    const s = await start({ credits: 0, maxUnpaidBytesPerAccount: 1024 * 1024 });
    const answers: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await call(s.url, 'POST', '/contacts', {
        key: s.apiKey,
        body: { contacts: noMatches(100, 3000, i * 100) },
      });
      answers.push(r.status);
      if (r.status === 429) {
        expect(r.json).toMatchObject({
          status: 429,
          error: 'Too Many Requests',
          code: 'storage_quota_exceeded',
          message: expect.stringMatching(/no credit paid for.*at most 1048576/),
        });
        // Until the oldest job expires (24 h by default).
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(23 * 3600);
      }
    }
    // Each no-match record echoes its 3 KB custom_fields, so a job keeps over 300 KB of results:
    // two fit under 1 MiB, the other eighteen are refused.
    expect(answers.slice(0, 2)).toEqual([200, 200]);
    expect(answers.slice(2).every((a) => a === 429)).toBe(true);
    expect(s.admin.stats().jobs_submitted).toBe(2);
    // Once the stored jobs expire, the account may submit again.
    s.admin.advanceClock(24 * 3_600_000);
    const again = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: noMatches(100, 3000) },
    });
    expect(again.status).toBe(200);
  });

  it('caps unexpired jobs per account; other accounts are not affected; a replay still answers', async () => {
    const s = await start({ maxJobsPerAccount: 3 });
    const headers = { 'idempotency-key': 'k-0' };
    for (let i = 0; i < 3; i++) {
      const r = await call(s.url, 'POST', '/contacts', {
        key: s.apiKey,
        body: { contacts: [contact(i)] },
        headers: i === 0 ? headers : {},
      });
      expect(r.status).toBe(200);
    }
    const over = await call(s.url, 'POST', '/companies', {
      key: s.apiKey,
      body: { companies: [{ company_name: 'Acme', custom_fields: {} }] },
    });
    expect(over.status).toBe(429);
    expect(over.json.message).toMatch(/3 unexpired jobs, at most 3/);
    const before = s.admin.getAccount(s.accountId)?.credits;
    const replay = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(0)] },
      headers,
    });
    expect(replay.status).toBe(200);
    expect(s.admin.getAccount(s.accountId)?.credits).toBe(before);
    const other = s.admin.createAccount({});
    const theirs = await call(s.url, 'POST', '/contacts', {
      key: other.api_key,
      body: { contacts: [contact(9)] },
    });
    expect(theirs.status).toBe(200);
  });

  it('caps stored bytes: 429 when the account is full, 413 for a job larger than the cap alone, nothing charged', async () => {
    const s = await start({ maxStoredBytesPerAccount: 200_000 });
    const big = Array.from({ length: 50 }, (_, i) =>
      contact(i, { custom_fields: { row: i, pad: 'q'.repeat(1000) } }),
    );
    expect(
      (await call(s.url, 'POST', '/contacts', { key: s.apiKey, body: { contacts: big } })).status,
    ).toBe(200);
    expect(
      (await call(s.url, 'POST', '/contacts', { key: s.apiKey, body: { contacts: big } })).status,
    ).toBe(200);
    const credits = s.admin.getAccount(s.accountId)?.credits;
    const full = await call(s.url, 'POST', '/contacts', { key: s.apiKey, body: { contacts: big } });
    expect(full.status).toBe(429);
    expect(full.json.message).toMatch(/bytes of stored results, at most 200000/);
    const huge = Array.from({ length: 150 }, (_, i) =>
      contact(i, { custom_fields: { row: i, pad: 'q'.repeat(1500) } }),
    );
    s.admin.advanceClock(24 * 3_600_000);
    const alone = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: huge },
    });
    expect(alone.status).toBe(413);
    expect(alone.json).toMatchObject({ status: 413, code: 'storage_quota_exceeded' });
    expect(s.admin.getAccount(s.accountId)?.credits).toBe(credits);
    expect(s.admin.stats().jobs_submitted).toBe(2);
  });

  it('spec-only: the cap is a bare 429, as a rate limit is', async () => {
    const s = await start({ maxJobsPerAccount: 1, specOnly: true });
    await call(s.url, 'POST', '/contacts', { key: s.apiKey, body: { contacts: [contact(0)] } });
    const r = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(1)] },
    });
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBeUndefined();
  });

  it('defaults no normal use reaches: 10,000 jobs, 2 GiB, 128 MiB unpaid per account', () => {
    expect(resolveSandboxOptions()).toMatchObject({
      maxJobsPerAccount: 10_000,
      maxStoredBytesPerAccount: 2 * 1024 ** 3,
      maxUnpaidBytesPerAccount: 128 * 1024 ** 2,
    });
  });
});
