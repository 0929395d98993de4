/**
 * A call's `stop` signal (Ctrl-C in a bulk or verification run) ends its waits to send, never
 * a request on its way: nothing is lost by cutting a wait for a refused POST, and a POST that
 * may have been processed never comes back as one that was not.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/errors.js';
import { failure, startRig, type Rig } from '../api/harness.js';
import { SANDBOX_MODES } from './bulk-harness.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A sleep on the rig's fake clock that, like a Ctrl-C during it, aborts `stop` and ends. */
function stopWhileSleeping(stop: AbortController, time: { sleeps: number[] }) {
  return async (ms: number, signal?: AbortSignal) => {
    time.sleeps.push(ms);
    stop.abort();
    if (signal?.aborted) throw signal.reason;
  };
}

const contacts = (n: number) => ({
  contacts: Array.from({ length: n }, (_, i) => ({
    business_email: `p${i}@acme.com`,
    custom_fields: { row: i },
  })),
});

describe('a call stopped while it waits to send', () => {
  it.each(SANDBOX_MODES)(
    'a submission refused with an hour-long Retry-After ends INTERRUPTED at once when stopped: nothing charged ($name)',
    async ({ specOnly }) => {
      const stop = new AbortController();
      const sleeps: number[] = [];
      rig = await startRig({ specOnly }, { sleep: stopWhileSleeping(stop, { sleeps }) });
      rig.sandbox.admin.setFaults({ next: [{ status: 429, retry_after_s: 3600 }] });
      const err = await failure(() =>
        rig!.client.submitContacts(contacts(3), {
          idempotencyKey: randomUUID(),
          deadline: rig!.time.clock.now() + 2 * 3600_000,
          stop: stop.signal,
        }),
      );
      expect(err).toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
      expect(err.message).toBe('POST /contacts: cancelled while waiting to send');
      // It was waiting out the service's Retry-After (a spec-only service sends none: the
      // client's own backoff of a bare 429), and was sent once, refused.
      expect(sleeps).toEqual([specOnly ? expect.any(Number) : 3600_000]);
      expect(rig.sandbox.admin.stats()).toMatchObject({ jobs_submitted: 0, credits_charged: 0 });
    },
  );

  it.each(SANDBOX_MODES)(
    'a call whose stop has already fired is not sent at all ($name)',
    async ({ specOnly }) => {
      rig = await startRig({ specOnly });
      const stop = AbortSignal.abort();
      const err = await failure(() =>
        rig!.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), stop }),
      );
      expect(err).toMatchObject({ code: 'INTERRUPTED' });
      const verify = await failure(() => rig!.client.verifyEmail('jane@acme.com', { stop }));
      expect(verify).toMatchObject({ code: 'INTERRUPTED' });
      expect(rig.debug.filter((l) => l.startsWith('POST'))).toEqual([]);
      expect(rig.sandbox.admin.stats()).toMatchObject({
        jobs_submitted: 0,
        credits_charged: 0,
        verification_credits_charged: 0,
      });
    },
  );

  it('a POST that may have been processed (a 503 on a key the service honours) and is stopped in its backoff is UNCONFIRMED, not INTERRUPTED', async () => {
    const stop = new AbortController();
    const sleeps: number[] = [];
    rig = await startRig({}, { sleep: stopWhileSleeping(stop, { sleeps }) });
    // The first submission shows the service echoes Idempotency-Key: a repeat may be sent.
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    expect(rig.client.honoursIdempotency('contacts')).toBe(true);
    rig.sandbox.admin.setFaults({ next: [{ status: 503 }] });
    const err = await failure(() =>
      rig!.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), stop: stop.signal }),
    );
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(/^POST \/contacts: .*503.*; the service may have processed/);
    expect(err.hint).toMatch(/stopped while it waited to be sent again/);
    expect(sleeps).toHaveLength(1); // the backoff it was stopped in
  });

  it("a call's stop ends its backoff under a client that has its own signal too: no second request", async () => {
    const stop = new AbortController();
    const sleeps: number[] = [];
    // The client's signal (a run's second Ctrl-C) never fires; the call's stop (the first) does.
    const client = new AbortController();
    rig = await startRig({}, { signal: client.signal, sleep: stopWhileSleeping(stop, { sleeps }) });
    rig.sandbox.admin.setFaults({ next: [{ status: 503 }] });
    const err = await failure(() =>
      rig!.client.getContactsResults(randomUUID(), { stop: stop.signal }),
    );
    expect(err).toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
    expect(sleeps).toHaveLength(1);
    expect(rig.debug.filter((l) => l.startsWith('GET'))).toHaveLength(1);
  });

  it('a stop during a POST on its way does not cut it: its answer comes', async () => {
    rig = await startRig();
    const stop = new AbortController();
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 300 }] });
    const job = rig.client.submitContacts(contacts(2), {
      idempotencyKey: randomUUID(),
      stop: stop.signal,
    });
    await delay(50);
    stop.abort();
    await expect(job).resolves.toMatchObject({ job_id: expect.any(String) });
    expect(rig.sandbox.admin.stats()).toMatchObject({ jobs_submitted: 1, credits_charged: 2 });
  });

  it("the client's own signal cuts a POST on its way: UNCONFIRMED, as the service may have processed it", async () => {
    const controller = new AbortController();
    rig = await startRig({}, { signal: controller.signal });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 1000 }] });
    const job = failure(() =>
      rig!.client.submitContacts(contacts(2), { idempotencyKey: randomUUID() }),
    );
    await delay(100);
    controller.abort();
    const err = await job;
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.hint).toMatch(/cancelled while on its way/);
  });
});

describe("a call's attempt hooks (what a run journals)", () => {
  const recorder = () => {
    const seen: string[] = [];
    const hooks = {
      sending: async () => void seen.push('sending'),
      notSent: async (e: ApiError) => void seen.push(`notSent ${e.code}`),
    };
    return { seen, hooks };
  };

  it.each(SANDBOX_MODES)(
    'each attempt is told before it goes out; one refused with a 429 is told as not sent before the wait ($name)',
    async ({ specOnly }) => {
      rig = await startRig({ specOnly });
      const { seen, hooks } = recorder();
      rig.sandbox.admin.setFaults({ next: [{ status: 429 }, { status: 429 }] });
      const job = await rig.client.submitContacts(contacts(2), {
        idempotencyKey: randomUUID(),
        hooks,
      });
      expect(job.job_id).toEqual(expect.any(String));
      expect(seen).toEqual([
        'sending',
        'notSent RATE_LIMITED',
        'sending',
        'notSent RATE_LIMITED',
        'sending',
      ]);
    },
  );

  it('an attempt that may have been processed (a 503) is never told as not sent, nor is a later 429', async () => {
    rig = await startRig();
    await rig.client.submitContacts(contacts(1), { idempotencyKey: randomUUID() });
    const { seen, hooks } = recorder();
    rig.sandbox.admin.setFaults({ next: [{ status: 503 }, { status: 429 }] });
    await rig.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), hooks });
    expect(seen).toEqual(['sending', 'sending', 'sending']);
  });

  it('a hook that fails (the journal cannot be written) stops the call before its attempt goes out', async () => {
    rig = await startRig();
    const full = new Error('ENOSPC: no space left on device');
    const hooks = { sending: () => Promise.reject(full), notSent: async () => undefined };
    await expect(
      rig.client.submitContacts(contacts(2), { idempotencyKey: randomUUID(), hooks }),
    ).rejects.toBe(full);
    expect(rig.sandbox.admin.stats()).toMatchObject({ jobs_submitted: 0, credits_charged: 0 });
  });
});
