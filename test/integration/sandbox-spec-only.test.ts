import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function start(o: SandboxOptions = {}) {
  let t = Date.UTC(2026, 0, 1);
  sb = await startSandbox({ now: () => t, ...o });
  return { sb, tick: (ms: number) => (t += ms) };
}

const KEY = { 'Idempotency-Key': 'batch-0001' };

describe('sandbox --spec-only keeps only the spec promises', () => {
  it('ignores Idempotency-Key: a repeated POST makes a second job and charges again, no echo', async () => {
    const { sb } = await start({ specOnly: true });
    const body = { contacts: [contact(0), contact(1)] };
    const a = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers: KEY });
    const b = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers: KEY });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.json.job_id).not.toBe(a.json.job_id);
    expect(a.headers['idempotency-key']).toBeUndefined();
    expect(b.headers['idempotency-key']).toBeUndefined();
    expect(sb.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 4 });
  });

  it('answers expiration_date as a string, original_fields as JSON text, 202 without body or Retry-After', async () => {
    const { sb, tick } = await start({ specOnly: true, jobMs: 4000, ttlMs: 60_000 });
    const job = await call(sb.url, 'POST', '/contacts', {
      key: sb.apiKey,
      body: { contacts: [contact(0)] },
    });
    expect(job.json.expiration_date).toBe(String((Date.UTC(2026, 0, 1) + 60_000) / 1000));
    const path = `/contacts/results/${job.json.job_id}.json`;
    const pending = await call(sb.url, 'GET', path, { key: sb.apiKey });
    expect(pending.status).toBe(202);
    expect(pending.text).toBe('');
    expect(pending.headers['retry-after']).toBeUndefined();
    tick(4000);
    const done = await call(sb.url, 'GET', path, { key: sb.apiKey });
    const rec = done.json.contacts[0];
    expect(typeof rec.original_fields).toBe('string');
    expect(JSON.parse(rec.original_fields)).toMatchObject({ first_name: 'Jane0' });
    expect(rec.custom_fields).toEqual({ row: 0 });
  });

  it('words in-band and 400 errors without "credit"', async () => {
    const { sb } = await start({ specOnly: true, credits: 1 });
    const job = await call(sb.url, 'POST', '/contacts', {
      key: sb.apiKey,
      body: { contacts: [contact(0), contact(1)] },
    });
    expect(job.json.remaining_credits).toBe(0);
    const done = await call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: sb.apiKey,
    });
    const errors = done.json.contacts.map((r: { error: string }) => r.error);
    expect(errors).toEqual(['', 'No data returned: quota reached']);
    // The single lookups too (regression: they kept the default wording).
    const single = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: { business_email: 'zed@acme.com' },
    });
    expect(single.json.contact.error).toBe('No data returned: quota reached');
    const company = await call(sb.url, 'POST', '/company', {
      key: sb.apiKey,
      body: { company_website: 'acme.com' },
    });
    expect(company.json.companies[0].error).toBe('No data returned: quota reached');
    const bad = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body: { contacts: [] } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('Request rejected. Check: contacts');
    const dflt = await startSandbox({ credits: 0 });
    try {
      const d = await call(dflt.url, 'POST', '/contacts', {
        key: dflt.apiKey,
        body: { contacts: [] },
      });
      expect(d.json.message).not.toBe(bad.json.message);
    } finally {
      await dflt.close();
    }
  });

  it('rate limits with bare 429s: no Retry-After, no RateLimit-*, no body', async () => {
    const { sb } = await start({ specOnly: true, rateLimit: 1 });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      answers.push(
        await call(sb.url, 'GET', `/contacts/results/${crypto.randomUUID()}.json`, {
          key: sb.apiKey,
        }),
      );
    }
    expect(answers.map((a) => a.status)).toEqual([404, 404, 429]);
    for (const a of answers) {
      expect(Object.keys(a.headers).filter((h) => /^(retry-after|ratelimit)/.test(h))).toEqual([]);
    }
    expect(answers[2]?.text).toBe('');
  });

  it('reports verification credit exhaustion in-band with a 200', async () => {
    const { sb } = await start({ specOnly: true, verificationCredits: 0 });
    const v = await call(sb.url, 'POST', '/email-verification', {
      key: sb.apiKey,
      body: { email: 'jane@acme.com' },
    });
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({
      email: 'jane@acme.com',
      status: 'unknown',
      credit_charged: false,
      remaining_credits: 0,
    });
    expect(typeof v.json.error).toBe('string');
    expect(v.json.error).not.toMatch(/credit/i);
  });
});

describe('sandbox default mode echoes an honoured Idempotency-Key', () => {
  it('echoes the key on the first 200 and on the replay; none without a key', async () => {
    const { sb } = await start();
    const body = { contacts: [contact(0)] };
    const a = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers: KEY });
    const b = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers: KEY });
    const c = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body });
    expect(a.headers['idempotency-key']).toBe('batch-0001');
    expect(b.headers['idempotency-key']).toBe('batch-0001');
    expect(b.json.job_id).toBe(a.json.job_id);
    expect(c.headers['idempotency-key']).toBeUndefined();
    expect(sb.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 2 });
  });
});
