import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function start(o: SandboxOptions = {}) {
  sb = await startSandbox(o);
  return sb;
}

const verify = (s: SandboxHandle, key = s.apiKey) =>
  call(s.url, 'POST', '/email-verification', { key, body: { email: 'jane@acme.com' } });

describe('sandbox rate limiting', () => {
  it('allows a burst of 2x the rate, then 429 with Retry-After and RateLimit headers; refills with time', async () => {
    let t = 1_000_000;
    const s = await start({ rateLimit: 2, now: () => t });
    const ok = [];
    for (let i = 0; i < 4; i++) ok.push(await verify(s));
    expect(ok.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(ok[0]?.headers['ratelimit-policy']).toBe('"default";q=2;w=1');
    expect(ok[0]?.headers['ratelimit']).toBe('"default";r=3;t=0');
    const limited = await verify(s);
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ status: 429, error: 'Too Many Requests' });
    expect(Object.keys(limited.json).sort()).toEqual(['error', 'message', 'status']);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.headers['ratelimit']).toBe('"default";r=0;t=1');
    // Buckets are per key: another key is not limited.
    expect((await verify(s, s.admin.createKey({}).api_key)).status).toBe(200);
    t += 500; // half a second at 2/s refills one token
    expect((await verify(s)).status).toBe(200);
    expect((await verify(s)).status).toBe(429);
    expect(s.admin.stats().requests_by_status).toMatchObject({ '200': 6, '429': 2 });
  });
});

describe('sandbox faults', () => {
  it('rates answer the status instead of processing, only on the given paths', async () => {
    const s = await start({ faults: { rates: { '500': 1 }, paths: ['/contacts'] } });
    const a = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(0)] },
    });
    expect(a.status).toBe(500);
    expect(a.json).toMatchObject({ status: 500, error: 'Internal Server Error' });
    expect(s.admin.stats().jobs_submitted).toBe(0);
    expect((await verify(s)).status).toBe(200);
    // Never on the admin API or the OpenAPI document.
    expect((await call(s.url, 'GET', '/_sandbox/stats', { key: s.adminToken })).status).toBe(200);
    s.admin.setFaults({ rates: { '429': 1 } });
    const b = await call(s.url, 'GET', '/openapi.json');
    expect(b.status).toBe(200);
    const c = await verify(s);
    expect(c.status).toBe(429);
    expect(c.headers['retry-after']).toBe('1');
  });

  it('the next queue is consumed one step per matching request, in order, honouring path', async () => {
    const s = await start();
    const put = await call(s.url, 'PUT', '/_sandbox/faults', {
      key: s.adminToken,
      body: {
        next: [
          { status: 503, path: '/contacts/results' },
          { status: 429, retry_after: 'http-date', retry_after_s: 2 },
          { status: 500 },
        ],
      },
    });
    expect(put.status).toBe(200);
    const first = await verify(s);
    expect(first.status).toBe(429);
    const when = Date.parse(String(first.headers['retry-after']));
    expect(when).toBeGreaterThan(Date.now() - 1000);
    expect(when).toBeLessThanOrEqual(Date.now() + 2000);
    expect((await verify(s)).status).toBe(500);
    expect((await verify(s)).status).toBe(200);
    const job = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(0)] },
    });
    const path = `/contacts/results/${job.json.job_id}.json`;
    const r = await call(s.url, 'GET', path, { key: s.apiKey });
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect((await call(s.url, 'GET', path, { key: s.apiKey })).status).toBe(200);
    expect((await call(s.url, 'GET', '/_sandbox/faults', { key: s.adminToken })).json.next).toEqual(
      [],
    );
  });

  it('reset destroys the socket before processing; reset after processing still creates the job', async () => {
    const s = await start({ faults: { next: [{ reset: true }, { reset: true, after: true }] } });
    const body = { contacts: [contact(0)] };
    await expect(call(s.url, 'POST', '/contacts', { key: s.apiKey, body })).rejects.toThrow();
    expect(s.admin.stats().jobs_submitted).toBe(0);
    await expect(call(s.url, 'POST', '/contacts', { key: s.apiKey, body })).rejects.toThrow();
    expect(s.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 1 });
    expect(s.admin.stats().requests_by_status.reset).toBe(2);
  });

  it('an ambiguous failure retried with the same Idempotency-Key is not charged twice', async () => {
    const s = await start({ faults: { next: [{ reset: true, after: true, path: '/contacts' }] } });
    const body = { contacts: [contact(0), contact(1)] };
    const headers = { 'idempotency-key': 'retry-me' };
    await expect(
      call(s.url, 'POST', '/contacts', { key: s.apiKey, body, headers }),
    ).rejects.toThrow();
    const again = await call(s.url, 'POST', '/contacts', { key: s.apiKey, body, headers });
    expect(again.status).toBe(200);
    expect(s.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 2 });
    const res = await call(s.url, 'GET', `/contacts/results/${again.json.job_id}.json`, {
      key: s.apiKey,
    });
    expect(res.json.contacts).toHaveLength(2);
  });

  it('truncate sends the full Content-Length but only part of the body', async () => {
    const s = await start({ faults: { truncate_rate: 1 } });
    await expect(verify(s)).rejects.toThrow();
    expect(s.admin.getAccount(s.accountId)?.verification_credits).toBe(9_999);
  });

  it('latency delays the answer', async () => {
    const s = await start({ faults: { latency_ms: 40 } });
    const t0 = performance.now();
    expect((await verify(s)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
  });

  it('a client that gives up during a long delay is not processed, and close() does not wait for it', async () => {
    const s = await start({ faults: { next: [{ delay_ms: 60_000 }] } });
    const ac = new AbortController();
    const pending = call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(0)] },
      signal: ac.signal,
    });
    // The next request on another connection is not delayed: the queue step was consumed.
    expect((await verify(s)).status).toBe(200);
    ac.abort();
    await expect(pending).rejects.toThrow();
    const t0 = performance.now();
    await s.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(s.admin.stats().jobs_submitted).toBe(0);
  });

  it('shuffle_results and drop_custom_fields change bulk results but not the records', async () => {
    const s = await start({ seed: 7 });
    const contacts = Array.from({ length: 30 }, (_, i) => contact(i));
    const job = await call(s.url, 'POST', '/contacts', { key: s.apiKey, body: { contacts } });
    const path = `/contacts/results/${job.json.job_id}.json`;
    const plain = (await call(s.url, 'GET', path, { key: s.apiKey })).json.contacts;
    s.admin.setFaults({ shuffle_results: true });
    const shuffled = (await call(s.url, 'GET', path, { key: s.apiKey })).json.contacts;
    expect(shuffled).not.toEqual(plain);
    const byRow = (l: { custom_fields: { row: number } }[]) =>
      [...l].sort((a, b) => a.custom_fields.row - b.custom_fields.row);
    expect(byRow(shuffled)).toEqual(plain);
    s.admin.setFaults({ drop_custom_fields: true });
    const dropped = (await call(s.url, 'GET', path, { key: s.apiKey })).json.contacts;
    expect(dropped.every((c: object) => !('custom_fields' in c))).toBe(true);
    expect(dropped.map((c: { original_fields: unknown }) => c.original_fields)).toEqual(
      plain.map((c: { original_fields: unknown }) => c.original_fields),
    );
    s.admin.setFaults({ drop_custom_fields: 0.5 });
    const half = (await call(s.url, 'GET', path, { key: s.apiKey })).json.contacts;
    const kept = half.filter((c: object) => 'custom_fields' in c).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(30);
  });

  it('refuses an invalid faults body with 400', async () => {
    const s = await start();
    const a = await call(s.url, 'PUT', '/_sandbox/faults', {
      key: s.adminToken,
      body: { rates: { '500': 2 }, bogus: 1 },
    });
    expect(a.status).toBe(400);
    expect(a.json.message).toContain('bogus');
    expect(() => s.admin.setFaults({ latency_ms: -1 })).toThrow(/latency_ms/);
  });
});
