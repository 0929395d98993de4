import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotencyScope, memoryIdempotencyStore } from '../../src/api/idempotency.js';
import { failure, startRig, type Rig } from '../api/harness.js';

const contacts = { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 1 } }] };
let rig: Rig;
afterEach(() => rig?.close());

describe('client retries against the sandbox', () => {
  it('honours a 429 Retry-After in seconds, even for a plain POST', async () => {
    rig = await startRig({
      faults: { next: [{ status: 429, retry_after: 'seconds', retry_after_s: 3 }] },
    });
    const res = await rig.client.enrichContact({ business_email: 'jane@acme.com' });
    expect(res.contact.email).toBeTruthy();
    expect(rig.time.sleeps).toEqual([3000]);
    expect(rig.sandbox.admin.stats().requests_by_status).toMatchObject({ '429': 1, '200': 1 });
  });

  it('honours a 429 Retry-After given as an HTTP-date, read on the injected clock', async () => {
    rig = await startRig({
      faults: { next: [{ status: 429, retry_after: 'http-date', retry_after_s: 5 }] },
    });
    const res = await rig.client.verifyEmail('jane@acme.com');
    expect(['valid', 'invalid', 'unknown']).toContain(res.status);
    expect(rig.time.sleeps).toHaveLength(1);
    // An HTTP-date has whole seconds: the wait is 5 s rounded down to the second.
    expect(rig.time.sleeps[0]).toBeGreaterThan(4000);
    expect(rig.time.sleeps[0]).toBeLessThanOrEqual(5000);
  });

  it('retries a GET after 5xx with exponential backoff, then succeeds', async () => {
    rig = await startRig();
    const job = await rig.client.submitContacts(contacts, { idempotencyKey: 'k-5xx' });
    rig.sandbox.admin.setFaults({ next: [{ status: 500 }, { status: 503, retry_after_s: 2 }] });
    const state = await rig.client.getContactsResults(job.job_id);
    expect(state.state).toBe('done');
    // 500: backoff 100 ms * equal jitter 0.5 = 75 ms; 503 carries Retry-After: 2.
    expect(rig.time.sleeps).toEqual([75, 2000]);
    expect(
      rig.debug.some((l) =>
        /retrying GET \/contacts\/results\/.+ in 75ms \(attempt 2 of 5/.test(l),
      ),
    ).toBe(true);
  });

  it('reports a 5xx on a single-record POST without repeating it', async () => {
    rig = await startRig({ faults: { next: [{ status: 500 }] } });
    const err = await failure(() => rig.client.enrichContact({ business_email: 'jane@acme.com' }));
    expect(err.code).toBe('UNCONFIRMED');
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(
      /^POST \/contact: 500 Internal Server Error.*may have processed \(and charged\)/,
    );
    expect(err.hint).toMatch(/Idempotency-Key/);
    expect(rig.time.sleeps).toEqual([]);
  });

  it('retries a bulk POST after an ambiguous reset only to a service known to honour its key', async () => {
    rig = await startRig({ faults: { next: [{ reset: true, after: true }] } });
    const err = await failure(() =>
      rig.client.submitContacts(contacts, { idempotencyKey: 'k-reset' }),
    );
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(/^POST \/contacts: connection failed.*may have processed/);
    expect(rig.time.sleeps).toEqual([]);
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(1);
    const honoured = memoryIdempotencyStore();
    // A lesson of another account is no promise to this one.
    honoured.set(idempotencyScope(new URL(rig.sandbox.url), '/contacts', 'other-account'), true);
    const other = rig.makeClient({ idempotencyStore: honoured });
    rig.sandbox.admin.setFaults({ next: [{ reset: true, after: true }] });
    expect(
      await failure(() => other.submitContacts(contacts, { idempotencyKey: 'k-other' })),
    ).toMatchObject({ code: 'UNCONFIRMED' });
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(2);
    // Nor is one of another service behind the same address (another path, the same key).
    const beside = memoryIdempotencyStore();
    beside.set(
      idempotencyScope(new URL(`${rig.sandbox.url}/v2/`), '/contacts', rig.client.account),
      true,
    );
    const besides = rig.makeClient({ idempotencyStore: beside });
    rig.sandbox.admin.setFaults({ next: [{ reset: true, after: true }] });
    expect(
      await failure(() => besides.submitContacts(contacts, { idempotencyKey: 'k-beside' })),
    ).toMatchObject({ code: 'UNCONFIRMED' });
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(3);
    honoured.set(idempotencyScope(new URL(rig.sandbox.url), '/contacts', rig.client.account), true);
    const trusting = rig.makeClient({ idempotencyStore: honoured });
    rig.sandbox.admin.setFaults({ next: [{ reset: true, after: true }] });
    const job = await trusting.submitContacts(contacts, { idempotencyKey: 'k-reset-2' });
    expect(job.job_id).toBeTruthy();
    expect(rig.time.sleeps).toHaveLength(1);
    // The sandbox de-duplicated the repeat: one job more, not two.
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(4);
  });

  it('a repeatable POST whose every answer is lost ends UNCONFIRMED, not as one that never reached the service (regression: journaled NETWORK, sent again by the next run)', async () => {
    rig = await startRig({});
    const honoured = memoryIdempotencyStore();
    honoured.set(idempotencyScope(new URL(rig.sandbox.url), '/contacts', rig.client.account), true);
    const trusting = rig.makeClient({ idempotencyStore: honoured });
    rig.sandbox.admin.setFaults({
      next: Array.from({ length: 10 }, () => ({ reset: true, after: true })),
    });
    const err = await failure(() =>
      trusting.submitContacts(contacts, { idempotencyKey: 'k-lost' }),
    );
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.hint).toMatch(/sent again with the same Idempotency-Key/);
    expect(rig.time.sleeps.length).toBeGreaterThan(0);
    // Every attempt reached the sandbox, which de-duplicated them: one job.
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(1);
  });

  it('does not repeat a plain POST whose connection was reset', async () => {
    rig = await startRig({ faults: { next: [{ reset: true, after: true }] } });
    const err = await failure(() => rig.client.enrichContact({ business_email: 'jane@acme.com' }));
    expect(err.code).toBe('UNCONFIRMED');
    expect(err.message).toMatch(/^POST \/contact: connection failed/);
    expect(rig.time.sleeps).toEqual([]);
    expect(rig.sandbox.admin.stats().credits_charged).toBe(1);
  });

  it('retries a GET whose connection was reset before an answer', async () => {
    rig = await startRig();
    const job = await rig.client.submitCompanies(
      { companies: [{ company_name: 'Acme', custom_fields: { row: 1 } }] },
      { idempotencyKey: 'k-c' },
    );
    rig.sandbox.admin.setFaults({ next: [{ reset: true }] });
    const state = await rig.client.getCompaniesResults(job.job_id);
    expect(state).toMatchObject({
      state: 'done',
      records: [expect.objectContaining({ name: expect.any(String) })],
    });
    expect(rig.time.sleeps).toHaveLength(1);
  });

  it('retries a truncated GET body and reports a truncated plain POST', async () => {
    rig = await startRig();
    const job = await rig.client.submitContacts(contacts, { idempotencyKey: 'k-t' });
    rig.sandbox.admin.setFaults({ next: [{ truncate: true }] });
    expect((await rig.client.getContactsResults(job.job_id)).state).toBe('done');
    expect(rig.time.sleeps).toHaveLength(1);
    rig.sandbox.admin.setFaults({ next: [{ truncate: true }] });
    const err = await failure(() => rig.client.enrichCompany({ company_name: 'Acme' }));
    expect(err.code).toBe('UNCONFIRMED');
    expect(err.message).toMatch(/^POST \/company: response body cut short/);
    expect(rig.time.sleeps).toHaveLength(1);
  });

  it('retries a refused connection, even for a plain POST, up to maxAttempts', async () => {
    rig = await startRig();
    await rig.sandbox.close();
    const err = await failure(() => rig.client.enrichContact({ business_email: 'jane@acme.com' }));
    expect(err.code).toBe('NETWORK');
    expect(err.message).toMatch(/cannot connect \(ECONNREFUSED\) \(after 5 attempts\)/);
    expect(rig.time.sleeps).toEqual([75, 150, 300, 600]);
  });

  it('429s use up no attempt: more of them than maxAttempts, each server wait kept', async () => {
    const step = { status: 429, retry_after_s: 1 };
    rig = await startRig(
      { faults: { next: [step, step, step, step] } },
      { retry: { maxAttempts: 3 } },
    );
    const res = await rig.client.verifyEmail('jane@acme.com');
    expect(['valid', 'invalid', 'unknown']).toContain(res.status);
    expect(rig.time.sleeps).toEqual([1000, 1000, 1000, 1000]);
  });

  it("without a deadline, a 429's wait past the retry budget is not made: RATE_LIMITED at once, after one request", async () => {
    rig = await startRig(
      {
        faults: {
          next: [
            { status: 429, retry_after_s: 90 },
            { status: 429, retry_after_s: 90 },
          ],
        },
      },
      { retry: { maxTotalWaitMs: 60_000 } },
    );
    const err = await failure(() => rig.client.verifyEmail('jane@acme.com'));
    expect(err.code).toBe('RATE_LIMITED');
    // Before session 24: a wait of 60 s, then a last try refused again.
    expect(rig.time.sleeps).toEqual([]);
    expect(rig.debug.filter((l) => l.startsWith('POST'))).toHaveLength(1);
    expect(err.message).toMatch(
      /asked to wait until .*, after the deadline, so it was not sent again$/,
    );
  });

  it('honours a Retry-After past the retry budget when the deadline allows it', async () => {
    rig = await startRig();
    const job = await rig.client.submitContacts(contacts, { idempotencyKey: 'k-150' });
    const deadline = rig.time.clock.now() + 2 * 3_600_000;
    rig.sandbox.admin.setFaults({ next: [{ status: 503, retry_after_s: 150 }] });
    const state = await rig.client.getContactsResults(job.job_id, { deadline });
    expect(state.state).toBe('done');
    expect(rig.time.sleeps).toEqual([150_000]);
  });

  it('bounds every wait by the deadline: two 503s asking 20 s under a 3 s deadline take 3 s', async () => {
    rig = await startRig();
    const job = await rig.client.submitContacts(contacts, { idempotencyKey: 'k-3s' });
    const step = { status: 503, retry_after_s: 20 };
    rig.sandbox.admin.setFaults({ next: [step, step] });
    const deadline = rig.time.clock.now() + 3000;
    const err = await failure(() => rig.client.getContactsResults(job.job_id, { deadline }));
    expect(err).toMatchObject({ code: 'SERVER_ERROR', status: 503 });
    expect(rig.time.sleeps).toEqual([3000]);
  });

  it('never retries 400, 401, 403 or 404', async () => {
    rig = await startRig();
    const bad = await failure(() => rig.client.enrichContact({} as never));
    expect(bad).toMatchObject({ code: 'API_VALIDATION', status: 400, exitCode: 2 });
    expect(bad.fieldErrors.length).toBeGreaterThan(0);
    const wrongKey = rig.makeClient({ apiKey: 'sk_sbx_not_a_real_key_0000000000' });
    const unauth = await failure(() => wrongKey.verifyEmail('jane@acme.com'));
    expect(unauth).toMatchObject({ code: 'AUTH_INVALID', status: 401, exitCode: 4 });
    expect(unauth.message).toMatch(/^POST \/email-verification: 401 Unauthorized: /);
    const missing = await failure(() => rig.client.getContactsResults(randomUUID()));
    expect(missing).toMatchObject({ code: 'API_NOT_FOUND', status: 404 });
    rig.sandbox.admin.updateAccount(rig.sandbox.accountId, { suspended: true });
    const blocked = await failure(() => rig.client.getContactsResults(randomUUID()));
    expect(blocked).toMatchObject({ code: 'AUTH_FORBIDDEN', status: 403 });
    expect(rig.time.sleeps).toEqual([]);
  });
});
