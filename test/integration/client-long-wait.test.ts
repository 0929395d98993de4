/**
 * A 429 whose Retry-After is hours long is a quota (of jobs, of stored results), not a rate
 * limit. The client says so once (onLongWait), does not wait at all when the wait would end
 * after the call's deadline, and keeps downloading results while only submissions are refused.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { LongWait } from '../../src/api/client.js';
import { LONG_WAIT_MS } from '../../src/api/send.js';
import { failure, startRig, type Rig } from '../api/harness.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const contacts = (n: number) => ({
  contacts: Array.from({ length: n }, (_, i) => ({
    business_email: `p${i}@acme.com`,
    custom_fields: { row: i },
  })),
});

const DAY_S = 86_400;

describe('a 429 that asks for a wait longer than the call may take', () => {
  it('fails at once with RATE_LIMITED, saying until when, after one request: no wait, nothing charged', async () => {
    const waits: LongWait[] = [];
    rig = await startRig({}, { onLongWait: (w) => waits.push(w) });
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: DAY_S }] });
    const now = rig.time.clock.now();
    const err = await failure(() =>
      rig!.client.submitContacts(contacts(3), {
        idempotencyKey: randomUUID(),
        deadline: now + 2 * 3600_000,
      }),
    );
    const until = new Date(now + DAY_S * 1000).toISOString();
    expect(err).toMatchObject({ code: 'RATE_LIMITED', exitCode: 6, status: 429 });
    expect(err.message).toMatch(
      new RegExp(
        `^POST /contacts: 429 Too Many Requests.*; the service asked to wait until ${until}, after the deadline, so it was not sent again$`,
      ),
    );
    expect(rig.time.sleeps).toEqual([]);
    expect(rig.debug.filter((l) => l.startsWith('POST'))).toHaveLength(1);
    expect(waits).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/contacts',
        until: now + DAY_S * 1000,
        pastDeadline: true,
        message: expect.stringMatching(/^POST \/contacts: 429 Too Many Requests/),
      }),
    ]);
    expect(rig.sandbox.admin.stats()).toMatchObject({ jobs_submitted: 0, credits_charged: 0 });

    // Another POST of the client is not sent at all while the wait lasts.
    const next = await failure(() =>
      rig!.client.submitContacts(contacts(1), {
        idempotencyKey: randomUUID(),
        deadline: now + 3600_000,
      }),
    );
    expect(next).toMatchObject({ code: 'RATE_LIMITED' });
    expect(next.message).toBe(
      `POST /contacts: the service asked to wait until ${until}, after the deadline, so it was not sent`,
    );
    expect(rig.debug.filter((l) => l.startsWith('POST'))).toHaveLength(1);
  });

  it('a wait within the deadline is waited out, told once however many calls meet it, and the call then goes through', async () => {
    const waits: LongWait[] = [];
    // Both calls are refused at the same moment: the clock stands still while they wait.
    const sleeps: number[] = [];
    const sleep = async (ms: number) => void sleeps.push(ms);
    rig = await startRig({}, { onLongWait: (w) => waits.push(w), sleep });
    const now = rig.time.clock.now();
    rig.sandbox.admin.setFaults({
      next: [
        { status: 429, retry_after_s: 600 },
        { status: 429, retry_after_s: 600 },
      ],
    });
    const deadline = now + 3600_000;
    const send = () =>
      rig!.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), deadline });
    const [a, b] = await Promise.all([send(), send()]);
    expect(a.job_id).not.toBe(b.job_id);
    expect(waits).toEqual([expect.objectContaining({ until: now + 600_000, pastDeadline: false })]);
    expect(sleeps).toEqual([600_000, 600_000]);
    expect(rig.sandbox.admin.stats()).toMatchObject({ jobs_submitted: 2, credits_charged: 4 });
  });

  it('a short wait (a rate limit of seconds) is not told', async () => {
    const waits: LongWait[] = [];
    rig = await startRig({}, { onLongWait: (w) => waits.push(w) });
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: 2 }] });
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    expect(rig.time.sleeps).toEqual([2000]);
    expect(waits).toEqual([]);
  });

  it('the error says how long the service asked to wait (what a resume hint is built from)', async () => {
    rig = await startRig();
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: DAY_S }] });
    const deadline = rig.time.clock.now() + 3600_000;
    const err = await failure(() =>
      rig!.client.submitContacts(contacts(1), { idempotencyKey: randomUUID(), deadline }),
    );
    expect(err).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: DAY_S * 1000 });
    // Ten minutes later, another call of the client is refused without being sent: ten
    // minutes less to wait.
    await rig.time.sleep(600_000);
    const next = await failure(() =>
      rig!.client.submitContacts(contacts(1), { idempotencyKey: randomUUID(), deadline }),
    );
    expect(next).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: DAY_S * 1000 - 600_000 });
  });

  it('a POST that may have been processed (a 503) and is then refused for a day ends UNCONFIRMED, not as one never sent', async () => {
    rig = await startRig();
    // The service has shown that it honours Idempotency-Key: the 503 is sent again.
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    rig.sandbox.admin.setFaults({
      next: [{ status: 503 }, { status: 429, retry_after_s: DAY_S }],
    });
    const deadline = rig.time.clock.now() + 3600_000;
    const err = await failure(() =>
      rig!.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), deadline }),
    );
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(
      /after the deadline, so it was not sent again; the service may have processed/,
    );
    expect(rig.debug.filter((l) => l.startsWith('POST'))).toHaveLength(3);
  });

  it('a GET answered 503 and then refused for a day is RATE_LIMITED: nothing to confirm', async () => {
    rig = await startRig();
    rig.sandbox.admin.setFaults({
      next: [{ status: 503 }, { status: 429, retry_after_s: DAY_S }],
    });
    const deadline = rig.time.clock.now() + 3600_000;
    const err = await failure(() => rig!.client.getContactsResults(randomUUID(), { deadline }));
    expect(err).toMatchObject({ code: 'RATE_LIMITED', exitCode: 6 });
  });

  it('a wait of exactly LONG_WAIT_MS is told; a 503 (no wait asked) tells nothing', async () => {
    const waits: LongWait[] = [];
    rig = await startRig({}, { onLongWait: (w) => waits.push(w) });
    rig.sandbox.admin.setFaults({ next: [{ status: 503 }, { status: 503 }] });
    await rig.client.getContactsResults(randomUUID()).catch(() => undefined);
    expect(waits).toEqual([]);
    const now = rig.time.clock.now();
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: LONG_WAIT_MS / 1000 }] });
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    expect(waits).toEqual([expect.objectContaining({ until: now + LONG_WAIT_MS })]);
  });

  it('a wait ending LONG_WAIT_MS or more after the last one told is a new wait, told again', async () => {
    const waits: LongWait[] = [];
    rig = await startRig({}, { onLongWait: (w) => waits.push(w) });
    const start = rig.time.clock.now();
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: 60 }] });
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    // Waited out: the next refusal, 60 s later, asks for 30 s more than the wait told.
    expect(rig.time.clock.now()).toBe(start + 60_000);
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: 30 }] });
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    expect(waits.map((w) => w.until)).toEqual([start + 60_000, start + 90_000]);
  });

  it('a wait that ends at the deadline itself is waited out: told as within the deadline', async () => {
    const waits: LongWait[] = [];
    rig = await startRig({}, { onLongWait: (w) => waits.push(w) });
    const now = rig.time.clock.now();
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: 600 }] });
    const job = await rig.client.submitContacts(contacts(1), {
      idempotencyKey: randomUUID(),
      deadline: now + 600_000,
    });
    expect(job.job_id).toEqual(expect.any(String));
    expect(rig.time.sleeps).toEqual([600_000]);
    expect(waits).toEqual([expect.objectContaining({ until: now + 600_000, pastDeadline: false })]);
  });

  it('while submissions are refused for a day, the results of an accepted job are still downloaded', async () => {
    rig = await startRig({ jobMs: 0 });
    const job = await rig.client.submitContacts(contacts(2), { idempotencyKey: randomUUID() });
    rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: DAY_S }] });
    const deadline = rig.time.clock.now() + 3600_000;
    const refused = await failure(() =>
      rig!.client.submitContacts(contacts(1), { idempotencyKey: randomUUID(), deadline }),
    );
    expect(refused).toMatchObject({ code: 'RATE_LIMITED' });
    const results = await rig.client.getContactsResults(job.job_id, {
      downloadUrl: job.download_url,
      deadline,
    });
    expect(results).toMatchObject({ state: 'done' });
    expect(rig.time.sleeps).toEqual([]);
  });
});
