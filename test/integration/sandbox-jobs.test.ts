import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** A sandbox on a fixed clock that only moves when the test says so. */
async function start(o: SandboxOptions = {}) {
  let t = Date.UTC(2026, 0, 1);
  sb = await startSandbox({ now: () => t, ...o });
  return { sb, tick: (ms: number) => (t += ms) };
}

describe('sandbox bulk jobs', () => {
  it('answers 202 with Retry-After and progress until done, 200 when done, 404 once expired', async () => {
    const { sb, tick } = await start({ jobMs: 4000, ttlMs: 60_000 });
    const job = await call(sb.url, 'POST', '/contacts', {
      key: sb.apiKey,
      body: { contacts: [contact(0), contact(1)] },
    });
    expect(job.json.expiration_date).toBe(Math.floor((Date.UTC(2026, 0, 1) + 60_000) / 1000));
    const path = `/contacts/results/${job.json.job_id}.json`;
    const p1 = await call(sb.url, 'GET', path, { key: sb.apiKey });
    expect(p1.status).toBe(202);
    expect(p1.headers['retry-after']).toBe('4');
    expect(p1.json).toEqual({
      status: 'processing',
      processed: 0,
      total: 2,
      remaining_credits: 99_998,
    });
    tick(2500);
    const p2 = await call(sb.url, 'GET', path, { key: sb.apiKey });
    expect(p2.status).toBe(202);
    expect(p2.headers['retry-after']).toBe('2');
    expect(p2.json.processed).toBe(1);
    tick(1500);
    expect((await call(sb.url, 'GET', path, { key: sb.apiKey })).status).toBe(200);
    sb.admin.advanceClock(56_000); // exactly at the expiration time
    const gone = await call(sb.url, 'GET', path, { key: sb.apiKey });
    expect(gone.status).toBe(404);
    expect(gone.json).toMatchObject({ status: 404, error: 'Not Found' });
    sb.admin.advanceClock(-60_000); // deleted for good: going back in time does not bring it back
    expect((await call(sb.url, 'GET', path, { key: sb.apiKey })).status).toBe(404);
  });

  it('expires results via the HTTP clock advance too', async () => {
    const { sb } = await start({ ttlMs: 1000 });
    const job = await call(sb.url, 'POST', '/companies', {
      key: sb.apiKey,
      body: { companies: [{ company_name: 'A', custom_fields: {} }] },
    });
    const path = `/companies/results/${job.json.job_id}.json`;
    expect((await call(sb.url, 'GET', path, { key: sb.apiKey })).status).toBe(200);
    const adv = await call(sb.url, 'POST', '/_sandbox/clock', {
      key: sb.adminToken,
      body: { advance_ms: 1000 },
    });
    expect(adv.json.offset_ms).toBe(1000);
    expect((await call(sb.url, 'GET', path, { key: sb.apiKey })).status).toBe(404);
  });

  it('404 for an unknown job, another account’s job, or the other kind’s results path', async () => {
    const { sb } = await start();
    const job = await call(sb.url, 'POST', '/contacts', {
      key: sb.apiKey,
      body: { contacts: [contact(0)] },
    });
    const other = sb.admin.createAccount();
    const path = `/contacts/results/${job.json.job_id}.json`;
    expect((await call(sb.url, 'GET', path, { key: other.api_key })).status).toBe(404);
    expect(
      (await call(sb.url, 'GET', `/companies/results/${job.json.job_id}.json`, { key: sb.apiKey }))
        .status,
    ).toBe(404);
    expect(
      (
        await call(sb.url, 'GET', `/contacts/results/${crypto.randomUUID()}.json`, {
          key: sb.apiKey,
        })
      ).status,
    ).toBe(404);
    // Another key of the same account sees it.
    const k2 = sb.admin.createKey({});
    expect((await call(sb.url, 'GET', path, { key: k2.api_key })).status).toBe(200);
  });

  it('charges at submission; when credits run out mid-job the rest carry an in-band error', async () => {
    const { sb } = await start({ credits: 3 });
    const contacts = [
      contact(0),
      contact(1, { first_name: 'nomatch' }),
      contact(2),
      contact(3),
      contact(4),
      contact(5),
    ];
    const job = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body: { contacts } });
    expect(sb.admin.getAccount(sb.accountId)?.credits).toBe(0);
    const res = await call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: sb.apiKey,
    });
    expect(res.status).toBe(200);
    expect(res.json.remaining_credits).toBe(0);
    const summary = res.json.contacts.map((c: { error: string; credit_charged: boolean }) => [
      c.credit_charged,
      c.error,
    ]);
    expect(summary.slice(0, 4)).toEqual([
      [true, ''],
      [false, 'No match found'],
      [true, ''],
      [true, ''],
    ]);
    for (const [charged, error] of summary.slice(4)) {
      expect(charged).toBe(false);
      expect(error).toMatch(/credits/);
    }
    expect(res.json.contacts[5]).toMatchObject({ email: '', title: '', custom_fields: { row: 5 } });
    const single = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: { business_email: 'a@b.co' },
    });
    expect(single.status).toBe(200);
    expect(single.json.contact.credit_charged).toBe(false);
    expect(single.json.remaining_credits).toBe(0);
    expect(single.json.contact.error).toMatch(/credits/);
    expect(sb.admin.stats()).toMatchObject({
      jobs_submitted: 1,
      records_submitted: 6,
      credits_charged: 3,
    });
  });

  it('companies: credits run out between the matches of one input', async () => {
    const { sb } = await start({ credits: 2 });
    const body = { company_name: 'Acme', metadata: { top_matches_returned: 3 } };
    const a = await call(sb.url, 'POST', '/company', { key: sb.apiKey, body });
    expect(a.json.companies.map((c: { credit_charged: boolean }) => c.credit_charged)).toEqual([
      true,
      true,
      false,
    ]);
    expect(a.json.companies[2].error).toMatch(/credits/);
    expect(a.json.remaining_credits).toBe(0);
  });

  it('Idempotency-Key: same body -> same job, no second charge; different body -> 422', async () => {
    const { sb } = await start();
    const headers = { 'idempotency-key': 'batch-1' };
    const body = {
      contacts: [contact(0), contact(1)],
      metadata: { real_time_verification: false },
    };
    const a = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers });
    // Same body with keys in another order is the same body.
    const reordered = {
      metadata: body.metadata,
      contacts: body.contacts.map((c) => Object.fromEntries(Object.entries(c).reverse())),
    };
    const b = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body: reordered, headers });
    expect(b.status).toBe(200);
    expect(b.json).toEqual(a.json);
    expect(sb.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 2 });
    const c = await call(sb.url, 'POST', '/contacts', {
      key: sb.apiKey,
      body: { contacts: [contact(9)] },
      headers,
    });
    expect(c.status).toBe(422);
    expect(c.json).toMatchObject({ status: 422, error: 'Unprocessable Entity' });
    expect(c.json.message).toContain('batch-1');
    // The key is per account: another account may use the same key for its own job.
    const other = sb.admin.createAccount();
    const d = await call(sb.url, 'POST', '/contacts', { key: other.api_key, body, headers });
    expect(d.json.job_id).not.toBe(a.json.job_id);
    // Without the header every POST is a new job.
    const e = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body });
    expect(e.json.job_id).not.toBe(a.json.job_id);
  });

  it.each([false, true])(
    'bulk filters: business_email_exists and mobile_phone_exists leave the other contacts out (api-spec 4.1; specOnly %s)',
    async (specOnly) => {
      const { sb } = await start({ specOnly });
      const contacts = [
        contact(0),
        contact(1, { first_name: 'Noemail' }),
        contact(2, { last_name: 'Nomobile' }),
      ];
      const job = await call(sb.url, 'POST', '/contacts', {
        key: sb.apiKey,
        body: {
          contacts,
          metadata: {
            business_email_exists: true,
            mobile_phone_enrichment: true,
            mobile_phone_exists: true,
          },
        },
      });
      const res = await call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
        key: sb.apiKey,
      });
      // "Only contacts having a work email are returned": the others are not in the answer.
      expect(res.json.contacts).toHaveLength(1);
      const [ok] = res.json.contacts;
      expect(ok).toMatchObject({ error: '', credit_charged: true });
      expect(ok.custom_fields).toEqual(contacts[0]!.custom_fields);
      expect(ok.mobile_phone).toMatch(/^\+/);
      expect(res.json.remaining_credits).toBe(99_999);
      // Without the filters, the same contacts all come back.
      const all = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body: { contacts } });
      const back = await call(sb.url, 'GET', `/contacts/results/${all.json.job_id}.json`, {
        key: sb.apiKey,
      });
      expect(back.json.contacts).toHaveLength(3);
    },
  );

  it('the single lookup answers a filtered contact with a no-match record (its response must hold one)', async () => {
    const { sb } = await start();
    const res = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      body: {
        first_name: 'Noemail',
        last_name: 'Doe',
        company_domain: 'acme.com',
        metadata: { business_email_exists: true },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.contact).toMatchObject({ credit_charged: false, email: '' });
    expect(res.json.contact.error).toMatch(/No match/);
  });

  it('bulk submissions and 202s carry remaining_credits; a replay reports the balance now', async () => {
    const { sb } = await start({ credits: 10, jobMs: 5000 });
    const headers = { 'idempotency-key': 'credits-1' };
    const body = { contacts: [contact(0), contact(1, { first_name: 'nomatch' }), contact(2)] };
    const a = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers });
    expect(a.status).toBe(200);
    expect(a.json.remaining_credits).toBe(8);
    const c = await call(sb.url, 'POST', '/companies', {
      key: sb.apiKey,
      body: { companies: [{ company_name: 'Acme', custom_fields: {} }] },
    });
    expect(c.json.remaining_credits).toBe(7);
    const pending = await call(sb.url, 'GET', `/contacts/results/${a.json.job_id}.json`, {
      key: sb.apiKey,
    });
    expect(pending.status).toBe(202);
    expect(pending.json.remaining_credits).toBe(7);
    sb.admin.updateAccount(sb.accountId, { credits: 42 });
    const replay = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body, headers });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({ ...a.json, remaining_credits: 42 });
    expect(sb.admin.stats().jobs_submitted).toBe(2);
  });
});

describe('sandbox capacity: --record-ms and --parallel-jobs', () => {
  it('a job takes job-ms + record-ms per record; past parallel-jobs jobs queue with progress 0', async () => {
    const { sb, tick } = await start({ jobMs: 0, recordMs: 1000, parallelJobs: 1, ttlMs: 60_000 });
    const post = () =>
      call(sb.url, 'POST', '/contacts', {
        key: sb.apiKey,
        body: { contacts: [contact(0), contact(1)] },
      });
    const a = await post();
    const b = await post();
    const poll = (job: typeof a) =>
      call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, { key: sb.apiKey });
    // A runs 0-2 s; B waits for A's slot, runs 2-4 s, and its results live 60 s from its start.
    expect(b.json.expiration_date).toBe(Math.floor((Date.UTC(2026, 0, 1) + 62_000) / 1000));
    tick(1000);
    const [a1, b1] = [await poll(a), await poll(b)];
    expect(a1.json).toMatchObject({ status: 'processing', processed: 1, total: 2 });
    expect(b1.json).toMatchObject({ status: 'processing', processed: 0, total: 2 });
    expect(b1.headers['retry-after']).toBe('3');
    tick(1000);
    expect((await poll(a)).status).toBe(200);
    expect((await poll(b)).json.processed).toBe(0);
    tick(1000);
    expect((await poll(b)).json.processed).toBe(1);
    tick(1000);
    expect((await poll(b)).status).toBe(200);
  });

  it('the limit is per account: another account’s jobs do not queue behind them', async () => {
    const { sb } = await start({ jobMs: 5000, parallelJobs: 1 });
    const body = { contacts: [contact(0)] };
    await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, body });
    const other = sb.admin.createAccount();
    const job = await call(sb.url, 'POST', '/contacts', { key: other.api_key, body });
    const p = await call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: other.api_key,
    });
    expect(p.headers['retry-after']).toBe('5');
  });
});
