/**
 * What bounds one attempt of a call and what counts as one (send.ts): a GET never outlives
 * its caller's deadline, a POST is never cut by it, and 429s use up no attempt.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { setTimeout as delay } from 'node:timers/promises';
import { failure, startRig, type Rig } from '../api/harness.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe("one attempt's limits", () => {
  it("a GET's attempt is cut at its caller's deadline (1.5 s away), not at the 10-minute limit", async () => {
    rig = await startRig({}, { retry: { baseMs: 100, maxAttempts: 1 } });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 10_000 }] });
    const deadline = rig.time.clock.now() + 1500;
    const err = await rig.client
      .getContactsResults(randomUUID(), { deadline })
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'TIMEOUT' });
    expect((err as ApiError).message).toMatch(/no complete answer within 1500ms/);
  });

  it('a POST under the same deadline is not cut: its answer, 2.5 s later, comes', async () => {
    rig = await startRig();
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 2500 }] });
    const deadline = rig.time.clock.now() + 1500;
    const job = await rig.client.submitContacts(
      { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 1 } }] },
      { idempotencyKey: randomUUID(), deadline },
    );
    expect(job.job_id).toEqual(expect.any(String));
    expect(rig.sandbox.admin.stats().jobs_submitted).toBe(1);
  });

  it('429s use up no attempt: 429, 429, 503, 503 and then an answer is within 3 attempts', async () => {
    rig = await startRig({}, { retry: { baseMs: 100, maxAttempts: 3 } });
    rig.sandbox.admin.setFaults({
      next: [{ status: 429 }, { status: 429 }, { status: 503 }, { status: 503 }],
    });
    const answer = await rig.client.getContactsResults(randomUUID()).catch((e: unknown) => e);
    // The job does not exist: the fifth request's 404 is the service's answer, not a retry.
    expect(answer).toMatchObject({ code: 'API_NOT_FOUND' });
    expect(rig.debug.filter((l) => l.startsWith('GET'))).toHaveLength(5);
  });

  it("a POST whose answer outlives the attempt's total limit may have been processed: UNCONFIRMED, never a plain TIMEOUT (a resume would send it again)", async () => {
    rig = await startRig({}, { timeouts: { totalMs: 300 } });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 1000 }] });
    const err = await failure(() =>
      rig!.client.submitContacts(
        { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 1 } }] },
        { idempotencyKey: randomUUID() },
      ),
    );
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(/no complete answer within 300ms; the service may have processed/);
  });

  it("a GET cancelled on its way by the client's signal is INTERRUPTED: a read has nothing to confirm", async () => {
    const controller = new AbortController();
    rig = await startRig({}, { signal: controller.signal });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 1000 }] });
    const read = failure(() => rig!.client.getContactsResults(randomUUID()));
    await delay(100);
    controller.abort();
    const err = await read;
    expect(err).toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
    expect(rig.debug.filter((l) => l.startsWith('GET'))).toEqual([
      expect.stringMatching(/^GET \/contacts\/results\/\S+ -> INTERRUPTED \(\d+ms, attempt 1\)$/),
    ]);
  });
});

describe('what --debug and -v say of each attempt (README: method, path, status, duration, attempt)', () => {
  it('each answer with its status, how long it took and which attempt it was', async () => {
    rig = await startRig();
    const job = randomUUID();
    rig.sandbox.admin.setFaults({ next: [{ status: 503, delay_ms: 300 }] });
    await rig.client.getContactsResults(job).catch(() => undefined);
    const lines = rig.debug.filter((l) => l.startsWith('GET'));
    expect(lines).toEqual([
      expect.stringMatching(/^GET \/contacts\/results\/\S+ -> 503 \(\d+ms, attempt 1\)$/),
      expect.stringMatching(/^GET \/contacts\/results\/\S+ -> 404 \(\d+ms, attempt 2\)$/),
    ]);
    // The first answer was held back 300 ms: its line says so (a clock, not a timestamp).
    const took = Number(/\((\d+)ms/.exec(lines[0] ?? '')?.[1]);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(10_000);
  });

  it('a retry says why (the status, or the error code of a failure without one), a give-up says why not', async () => {
    rig = await startRig({}, { retry: { baseMs: 100, maxAttempts: 2 } });
    const job = randomUUID();
    rig.sandbox.admin.setFaults({ next: [{ status: 503 }] });
    await rig.client.getContactsResults(job).catch(() => undefined);
    expect(rig.debug).toContainEqual(
      expect.stringMatching(
        /^retrying GET \/contacts\/results\/\S+ in \d+ms \(attempt 2 of 2, after 503 Service Unavailable\)$/,
      ),
    );
    rig.debug.length = 0;
    await rig.sandbox.close();
    const err = await failure(() => rig!.client.getContactsResults(job));
    expect(err).toMatchObject({ code: 'NETWORK' });
    expect(rig.debug).toEqual([
      expect.stringMatching(/^GET \/contacts\/results\/\S+ -> NETWORK \(\d+ms, attempt 1\)$/),
      expect.stringMatching(
        /^retrying GET \/contacts\/results\/\S+ in \d+ms \(attempt 2 of 2, after NETWORK\)$/,
      ),
      expect.stringMatching(/^GET \/contacts\/results\/\S+ -> NETWORK \(\d+ms, attempt 2\)$/),
      `not retrying GET /contacts/results/${job}.json: gave up after 2 attempts`,
    ]);
  });
});
