import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.js';
import { failure, startRig, type Rig } from '../api/harness.js';

let rig: Rig | undefined;
let other: Server | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  if (other) await new Promise((r) => other?.close(r));
  other = undefined;
});

/** A throwaway server on 127.0.0.1:0 that records what it receives. */
async function serve(handler: Parameters<typeof createServer>[1]) {
  const seen: IncomingMessage[] = [];
  other = createServer((req, res) => {
    seen.push(req);
    handler?.(req, res);
  });
  await new Promise<void>((r) => other?.listen(0, '127.0.0.1', r));
  const { port } = other.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen };
}

describe('client endpoints against the sandbox', () => {
  it('enriches a contact and a company, verifies an email, with remaining credits', async () => {
    rig = await startRig();
    const c = await rig.client.enrichContact({ business_email: 'jane@acme.com' });
    expect(c.remaining_credits).toBeLessThan(100_000);
    const co = await rig.client.enrichCompany({
      company_website: 'acme.com',
      metadata: { top_matches_returned: 2 },
    });
    expect(co.companies).toHaveLength(2);
    const v = await rig.client.verifyEmail('jane@acme.com');
    expect(v.email).toBe('jane@acme.com');
    expect(rig.debug.every((l) => !l.includes(rig!.sandbox.apiKey))).toBe(true);
  });

  it('reports a pending job with Retry-After and progress, then the records', async () => {
    rig = await startRig({ jobMs: 60_000 });
    const job = await rig.client.submitContacts(
      { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 7 } }] },
      { idempotencyKey: randomUUID() },
    );
    const pending = await rig.client.getContactsResults(job.job_id, {
      downloadUrl: job.download_url,
    });
    expect(pending).toMatchObject({ state: 'pending', processed: 0, total: 1 });
    if (pending.state === 'pending') expect(pending.retryAfterMs).toBeGreaterThan(0);
    rig.sandbox.admin.advanceClock(60_000);
    const done = await rig.client.getContactsResults(job.job_id, { downloadUrl: job.download_url });
    expect(done).toMatchObject({ state: 'done', records: [{ custom_fields: { row: 7 } }] });
  });

  it('never sends the key to a download_url on another origin', async () => {
    rig = await startRig();
    const foreign = await serve((_req, res) => res.end('{}'));
    const job = await rig.client.submitContacts(
      { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 1 } }] },
      { idempotencyKey: randomUUID() },
    );
    const evil = `${foreign.url}/contacts/results/${job.job_id}.json`;
    const state = await rig.client.getContactsResults(job.job_id, { downloadUrl: evil });
    expect(state.state).toBe('done');
    expect(foreign.seen).toHaveLength(0);
    expect(rig.debug.some((l) => /another origin/.test(l))).toBe(true);
  });

  it('checks a key at no cost: ok, invalid (revoked) or forbidden (suspended)', async () => {
    rig = await startRig();
    expect(await rig.client.checkKey()).toEqual({ ok: true });
    const extra = rig.sandbox.admin.createKey({ name: 'spare' });
    rig.sandbox.admin.revokeKey(extra.id);
    const revoked = rig.makeClient({ apiKey: extra.api_key });
    expect(await revoked.checkKey()).toMatchObject({ ok: false, reason: 'invalid' });
    rig.sandbox.admin.updateAccount(rig.sandbox.accountId, { suspended: true });
    expect(await rig.client.checkKey()).toMatchObject({ ok: false, reason: 'forbidden' });
    const stats = rig.sandbox.admin.stats();
    expect(stats.credits_charged + stats.verification_credits_charged).toBe(0);
  });

  it('times out a slow answer: a GET is retried, a plain POST is reported', async () => {
    // 1 s, not less: on a loaded CI machine a normal answer can take a few hundred ms.
    rig = await startRig({}, { timeouts: { headersMs: 1000 } });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 5000 }] });
    expect(await rig.client.checkKey()).toEqual({ ok: true });
    expect(rig.time.sleeps).toHaveLength(1);
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 5000 }] });
    const err = await failure(() => rig!.client.verifyEmail('jane@acme.com'));
    // A charged POST whose answer never came may have been processed: not repeated.
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(
      /^POST \/email-verification: no answer within 1000ms; the service may have processed \(and charged\)/,
    );
    expect(rig.time.sleeps).toHaveLength(1);
  });

  it('stops at once when the caller aborts, also while waiting to retry', async () => {
    const controller = new AbortController();
    rig = await startRig(
      {},
      {
        signal: controller.signal,
        sleep: async (_ms, signal) => {
          controller.abort();
          if (signal?.aborted) throw signal.reason;
        },
      },
    );
    rig.sandbox.admin.setFaults({ next: [{ status: 503, retry_after_s: 30 }] });
    const waiting = await failure(() => rig!.client.getContactsResults(randomUUID()));
    expect(waiting).toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
    expect(waiting.message).toMatch(/cancelled while waiting to send/);
    const before = await failure(() => rig!.client.verifyEmail('jane@acme.com'));
    expect(before).toMatchObject({ code: 'INTERRUPTED' });
    expect(rig.sandbox.admin.stats().verification_credits_charged).toBe(0);
  });

  it('stops at the overall deadline without retrying', async () => {
    rig = await startRig({}, { timeouts: { totalMs: 100 } });
    rig.sandbox.admin.setFaults({ next: [{ delay_ms: 5000 }] });
    const err = await failure(() => rig!.client.getContactsResults(randomUUID()));
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/no complete answer within 100ms/);
    expect(rig.time.sleeps).toEqual([]);
  });
});

describe('client against a misbehaving server', () => {
  const client = (url: string, over = {}) =>
    createClient({
      baseUrl: url,
      apiKey: 'sk_test_abcdefghijklmnop',
      sleep: async () => {},
      ...over,
    });

  it('sends the User-Agent and the key, and follows no redirect', async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' }).end();
    });
    const c = client(srv.url);
    const err = await failure(() => c.verifyEmail('a@b.co'));
    await c.close();
    await c.close(); // closing twice (a finally after an explicit close) is not an error
    expect(err.code).toBe('MALFORMED_RESPONSE');
    expect(err.message).toMatch(/302 Found: redirects are not followed/);
    expect(srv.seen).toHaveLength(1);
    expect(srv.seen[0]?.headers['user-agent']).toMatch(/^enrich\/\d+\.\d+\.\d+/);
    expect(srv.seen[0]?.headers.authorization).toBe('Bearer sk_test_abcdefghijklmnop');
  });

  it("a redirect's error says where it pointed, the key masked; a 300 is no answer either", async () => {
    const srv = await serve((req, res) => {
      // A proxy that bounces the request and puts its credentials in the new address.
      const key = (req.headers.authorization ?? '').replace('Bearer ', '');
      res.writeHead(300, { location: `http://127.0.0.1:9/elsewhere?key=${key}` }).end('{}');
    });
    const c = client(srv.url);
    const err = await failure(() => c.getContactsResults(randomUUID()));
    await c.close();
    expect(err.code).toBe('MALFORMED_RESPONSE');
    expect(err.message).toMatch(
      /300 Multiple Choices: redirects are not followed \(Location: http:\/\/127\.0\.0\.1:9\/elsewhere\?key=\*\*\*\)/,
    );
    expect(err.message).not.toContain('sk_test_');
    expect(srv.seen).toHaveLength(1);
  });

  it('rejects an answer that is not JSON or not the contract, never retries it, and says it may be charged', async () => {
    const bodies = ['<html>oops</html>', JSON.stringify({ email: 'a@b.co', status: 'maybe' })];
    const srv = await serve((_req, res) => res.end(bodies.shift()));
    const c = client(srv.url);
    expect((await failure(() => c.verifyEmail('a@b.co'))).message).toMatch(
      /200 answer is not JSON/,
    );
    const e2 = await failure(() => c.verifyEmail('a@b.co'));
    expect(e2.message).toMatch(/does not match the contract: status.*may have charged it/);
    expect(e2.code).toBe('UNCONFIRMED');
    await c.close();
    expect(srv.seen).toHaveLength(2);
  });

  it('checks bulk bodies that fail the quick checks against the schemas, loaded when needed', async () => {
    const bodies = [
      JSON.stringify({ job_id: '', download_url: 'http://x/y', expiration_date: 1 }),
      JSON.stringify({ contacts: [{ email: 3 }], remaining_credits: 1 }),
    ];
    const srv = await serve((_req, res) => res.end(bodies.shift()));
    const c = client(srv.url);
    const submit = await failure(() =>
      c.submitContacts(
        { contacts: [{ business_email: 'a@b.co', custom_fields: {} }] },
        { idempotencyKey: 'k' },
      ),
    );
    expect(submit.code).toBe('UNCONFIRMED');
    expect(submit.message).toMatch(/does not match the contract: job_id/);
    const results = await failure(() => c.getContactsResults(randomUUID()));
    expect(results.code).toBe('MALFORMED_RESPONSE');
    expect(results.message).toMatch(/does not match the contract: contacts\.0\.email/);
    await c.close();
  });

  it('times out a body that stalls, and refuses an oversized body', async () => {
    const srv = await serve((req, res) => {
      if (req.url?.includes('big')) {
        res.end(JSON.stringify({ contacts: [], remaining_credits: 1, pad: 'x'.repeat(5000) }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"contacts": [');
    });
    const c = client(srv.url, {
      timeouts: { bodyMs: 100 },
      retry: { maxAttempts: 1 },
      maxBodyBytes: 1000,
    });
    const stalled = await failure(() => c.getContactsResults(randomUUID()));
    expect(stalled.code).toBe('TIMEOUT');
    expect(stalled.message).toMatch(/body stalled for 100ms/);
    const big = await failure(() =>
      c.getContactsResults('big', { downloadUrl: `${srv.url}/big.json` }),
    );
    expect(big.message).toMatch(/exceeds the 1000-byte limit|larger than 1000 bytes/);
    await c.close();
  });

  it('keeps the key out of error messages even when the server echoes it', async () => {
    const srv = await serve((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 401,
          error: 'Unauthorized',
          message: `bad key ${req.headers.authorization}`,
        }),
      );
    });
    const c = client(srv.url);
    const err = await failure(() => c.enrichContact({ business_email: 'a@b.co' }));
    await c.close();
    expect(err.message).toBe('POST /contact: 401 Unauthorized: bad key Bearer ***');
  });
});
