import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type ClientOptions, type CreditsSeen } from '../../src/api/client.js';
import { creditsExhaustedError } from '../../src/cli/commands/single/lookup.js';
import { isCreditExhausted } from '../../src/contract/credits.js';
import { EnrichError } from '../../src/errors.js';

const KEY = 'sk_live_secret_0123456789abcdef';
const JOB = {
  job_id: 'j1',
  download_url: 'http://127.0.0.1:9/r/j1.json',
  expiration_date: 4_102_444_800,
};
const batch = { contacts: [{ business_email: 'a@acme.com', custom_fields: { row: 1 } }] };

let server: Server | undefined;
afterEach(async () => {
  if (server) await new Promise((r) => server?.close(r));
  server = undefined;
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A fake service on 127.0.0.1:0; `seen` holds each request's Idempotency-Key. */
async function serve(handler: Handler) {
  const seen: (string | undefined)[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers['idempotency-key'] as string | undefined);
      handler(req, res, seen.length);
    });
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function client(url: string, over: Partial<ClientOptions> = {}) {
  let now = Date.UTC(2026, 10, 24);
  const sleeps: number[] = [];
  const c = createClient({
    baseUrl: url,
    apiKey: KEY,
    clock: { now: () => now },
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    random: () => 0.5,
    retry: { baseMs: 100 },
    ...over,
  });
  return { c, sleeps, now: () => now };
}

async function thrown(p: Promise<unknown>): Promise<EnrichError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof EnrichError) return err;
    throw err;
  }
  throw new Error('expected an EnrichError');
}

describe('a bulk POST whose answer is lost', () => {
  /** Accepts submissions (echoing the key when `echo`), and resets the 2nd request after reading it. */
  const service = (echo: boolean) =>
    serve((req, res, n) => {
      if (n === 2) return req.socket.destroy();
      const key = req.headers['idempotency-key'] as string;
      json(res, 200, JOB, echo ? { 'idempotency-key': key } : {});
    });

  it('is sent again, with the same key, to a service that echoed the key on an accepted submission', async () => {
    const srv = await service(true);
    const { c } = client(srv.url);
    expect(c.honoursIdempotency('contacts')).toBeUndefined();
    await c.submitContacts(batch, { idempotencyKey: 'k1' });
    expect(c.honoursIdempotency('contacts')).toBe(true);
    expect(await c.submitContacts(batch, { idempotencyKey: 'k2' })).toMatchObject(JOB);
    expect(srv.seen).toEqual(['k1', 'k2', 'k2']);
    await c.close();
  });

  it('is not sent again to a service that never echoed it: UNCONFIRMED, exit 3, says it may be charged', async () => {
    const srv = await service(false);
    const { c, sleeps } = client(srv.url);
    await c.submitContacts(batch, { idempotencyKey: 'k1' });
    expect(c.honoursIdempotency('contacts')).toBe(false);
    const err = await thrown(c.submitContacts(batch, { idempotencyKey: 'k2' }));
    expect(err).toMatchObject({ code: 'UNCONFIRMED', exitCode: 3 });
    expect(err.message).toMatch(
      /^POST \/contacts: connection failed.*may have processed \(and charged\) this request/,
    );
    expect(srv.seen).toEqual(['k1', 'k2']);
    expect(sleeps).toEqual([]);
    await c.close();
  });

  it('nor on the first submission of a run, before the service showed anything', async () => {
    const srv = await serve((_req, res) => json(res, 502, { message: 'bad gateway' }));
    const { c } = client(srv.url);
    const err = await thrown(c.submitContacts(batch, { idempotencyKey: 'k1' }));
    expect(err).toMatchObject({ code: 'UNCONFIRMED', status: 502 });
    expect(srv.seen).toHaveLength(1);
    await c.close();
  });

  it('a single lookup is charged too: no repeat after a 5xx to a service that did not echo a key', async () => {
    const srv = await serve((req, res, n) =>
      n === 1 ? json(res, 503, {}) : json(res, 200, { contact: {}, remaining_credits: 5 }),
    );
    const { c } = client(srv.url);
    const err = await thrown(c.enrichContact({ business_email: 'a@acme.com' }));
    expect(err.code).toBe('UNCONFIRMED');
    expect(srv.seen).toHaveLength(1);
    // Every single POST carries a fresh key, so a service that honours keys can be trusted later.
    expect(srv.seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    await c.close();
  });
});

describe('429s and the rate limiter', () => {
  it('bare 429s use up no attempt and never end a call while the deadline has time left', async () => {
    const srv = await serve((_req, res, n) =>
      n <= 12 ? json(res, 429, {}) : json(res, 200, JOB, {}),
    );
    const { c, sleeps, now } = client(srv.url, { retry: { maxAttempts: 3 } });
    const deadline = now() + 3_600_000;
    expect(await c.submitContacts(batch, { idempotencyKey: 'k', deadline })).toMatchObject(JOB);
    expect(srv.seen).toHaveLength(13);
    // Each bare 429 halved the rate: the waits grow.
    expect(sleeps.at(-1)).toBeGreaterThan(sleeps[0] ?? Infinity);
    await c.close();
  });

  it('under a deadline, a service that only answers 429 ends the call once the wait it asks for would end past the deadline', async () => {
    const srv = await serve((_req, res) => json(res, 429, {}, { 'retry-after': '30' }));
    const { c, now } = client(srv.url);
    const start = now();
    const err = await thrown(c.getContactsResults('j1', { deadline: start + 100_000 }));
    expect(err.code).toBe('RATE_LIMITED');
    // Waits of 30 s as asked; the fourth refusal, at 90 s, asks for one ending at 120 s, after
    // the deadline: not made (before session 24 it was waited out to the deadline for a fifth refusal).
    expect(now()).toBe(start + 90_000);
    expect(srv.seen).toHaveLength(4);
    expect(err.message).toMatch(
      /asked to wait until .*, after the deadline, so it was not sent again$/,
    );
    await c.close();
  });

  it('one limiter for every call: what a 429 on a submit says slows the next poll too', async () => {
    const srv = await serve((req, res, n) =>
      n === 1
        ? json(res, 429, {}, { ratelimit: '"default";r=0;t=7' })
        : req.method === 'POST'
          ? json(res, 200, JOB)
          : json(res, 200, { contacts: [], remaining_credits: 3 }),
    );
    const { c, sleeps } = client(srv.url);
    await c.submitContacts(batch, { idempotencyKey: 'k' });
    expect(sleeps).toEqual([7000]);
    await c.getContactsResults('j1');
    expect(sleeps).toEqual([7000]);
    await c.close();
  });
});

describe('the key in what the service sends back', () => {
  it('is masked in records, echoed fields and the body kept for spooling', async () => {
    const record = {
      error: `bad key ${KEY}`,
      credit_charged: false,
      original_fields: { note: `key=${KEY}` },
      custom_fields: { row: 1, echo: KEY },
    };
    const srv = await serve((_req, res) =>
      json(res, 200, { contacts: [record], remaining_credits: 3 }),
    );
    const { c } = client(srv.url);
    const done = await c.getContactsResults('j1');
    if (done.state !== 'done') throw new Error('expected results');
    expect(JSON.stringify(done.records)).not.toContain(KEY);
    expect(done.records[0]).toMatchObject({ error: 'bad key ***', custom_fields: { echo: '***' } });
    const body = Buffer.from(done.body ?? new Uint8Array()).toString('utf8');
    expect(body).not.toContain(KEY);
    expect(JSON.parse(body)).toEqual({ contacts: done.records, remaining_credits: 3 });
    await c.close();
  });
});

describe('credits, read from the answer', () => {
  it('an in-band error in a verification 200 with no credits left is CREDITS_EXHAUSTED, whatever its wording', async () => {
    const srv = await serve((_req, res) =>
      json(res, 200, {
        email: 'a@acme.com',
        error: 'Quota reached for this period',
        credit_charged: false,
        remaining_credits: 0,
      }),
    );
    const { c } = client(srv.url);
    const err = await thrown(c.verifyEmail('a@acme.com'));
    expect(err).toMatchObject({ code: 'CREDITS_EXHAUSTED', exitCode: 5 });
    expect(err.message).toMatch(/remaining_credits 0.*Quota reached/);
    await c.close();
  });

  it('single contact and company lookups: not charged, no data, nothing left, whatever the wording', async () => {
    const empty = { error: 'Nope', credit_charged: false };
    const srv = await serve((req, res) =>
      req.url === '/contact'
        ? json(res, 200, { contact: empty, remaining_credits: 0 })
        : json(res, 200, {
            companies: [{ ...empty, original_fields: {}, custom_fields: {} }],
            remaining_credits: 0,
          }),
    );
    const { c } = client(srv.url);
    // The client returns the answer (the CLI prints it) and the CLI ends with exit 5.
    const contact = await c.enrichContact({ business_email: 'a@acme.com' });
    const e1 = creditsExhaustedError(
      'contact',
      [contact.contact.error],
      [isCreditExhausted(contact.contact, contact.remaining_credits)],
    );
    expect(e1).toMatchObject({
      code: 'CREDITS_EXHAUSTED',
      exitCode: 5,
      message: 'contact not enriched: Nope',
    });
    const company = await c.enrichCompany({ company_name: 'Acme' });
    const e2 = creditsExhaustedError(
      'company',
      company.companies.map((r) => r.error),
      company.companies.map((r) => isCreditExhausted(r, company.remaining_credits)),
    );
    expect(e2?.code).toBe('CREDITS_EXHAUSTED');
    expect(creditsExhaustedError('contact', ['Nope'], [false])).toBeUndefined();
    await c.close();
  });

  it('a record not found while credits remain is data, not exhaustion', async () => {
    const srv = await serve((_req, res) =>
      json(res, 200, {
        contact: { error: 'No credits were used', credit_charged: false },
        remaining_credits: 4,
      }),
    );
    const { c } = client(srv.url);
    expect((await c.enrichContact({ business_email: 'a@acme.com' })).remaining_credits).toBe(4);
    await c.close();
  });

  it('every remaining_credits the client sees is reported with its time, results included', async () => {
    const srv = await serve((req, res) =>
      req.method === 'GET'
        ? json(res, 200, { contacts: [], remaining_credits: 41 })
        : json(res, 200, {
            email: 'a@b.co',
            status: 'valid',
            credit_charged: true,
            remaining_credits: 9,
          }),
    );
    const seen: CreditsSeen[] = [];
    const { c, now } = client(srv.url, { onCredits: (s) => seen.push(s) });
    await c.getContactsResults('j1');
    await c.verifyEmail('a@b.co');
    expect(seen).toEqual([
      { kind: 'enrichment', remaining: 41, at: now() },
      { kind: 'verification', remaining: 9, at: now() },
    ]);
    await c.close();
  });
});
