import { readFileSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { resolveSandboxOptions } from '../../src/sandbox/start.js';
import { call } from '../sandbox/http-helper.js';
import { tempDir } from '../integration/bulk-harness.js';
import { readState } from '../sandbox/state-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});
async function start(o: SandboxOptions = {}) {
  sb = await startSandbox({ port: 0, ...o });
  return sb;
}

const contact = { business_email: 'jane@acme.com' };

/** Opens a raw TCP connection to the sandbox and collects what it answers. */
function rawSocket(
  url: string,
): Promise<{ socket: Socket; text: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      resolve({ socket, text: () => received, closed }),
    );
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', () => {});
    socket.once('error', reject);
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
  });
}

/** A good client keeps getting answers while an attack is under way. */
async function goodClientWorks(s: SandboxHandle): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const r = await call(s.url, 'POST', '/email-verification', {
      key: s.apiKey,
      body: { email: 'jane@acme.com' },
    });
    expect(r.status).toBe(200);
  }
}

describe('sandbox security (acceptance)', () => {
  it("another account's job is 404, exactly as an unknown job", async () => {
    const s = await start();
    const job = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: {
        contacts: [{ ...contact, custom_fields: { r: '1' } }],
        metadata: { real_time_verification: false },
      },
    });
    expect([200, 202]).toContain(job.status);
    const other = s.admin.createAccount({});
    const theirs = await call(s.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: other.api_key,
    });
    const unknown = await call(
      s.url,
      'GET',
      `/contacts/results/00000000-0000-4000-8000-000000000000.json`,
      { key: other.api_key },
    );
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(theirs.json.message.replace(job.json.job_id, 'ID')).toBe(
      unknown.json.message.replace('00000000-0000-4000-8000-000000000000', 'ID'),
    );
    expect(
      (await call(s.url, 'GET', `/contacts/results/${job.json.job_id}.json`, { key: s.apiKey }))
        .status,
    ).toBe(200);
  });

  it('a revoked key is refused at once, even on a kept-alive connection', async () => {
    const s = await start();
    const key = s.admin.createKey({ name: 'ci' });
    const ok = await call(s.url, 'POST', '/contact', { key: key.api_key, body: contact });
    expect(ok.status).toBe(200);
    s.admin.revokeKey(key.id);
    const refused = await call(s.url, 'POST', '/contact', { key: key.api_key, body: contact });
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({
      status: 401,
      error: 'Unauthorized',
      message: expect.stringMatching(/revoked/),
    });
  });

  it('keys are stored only as SHA-256 hashes in the --state file', async () => {
    const dir = await tempDir('enrich-state-');
    const s = await start({ stateDir: dir });
    const extra = s.admin.createKey({ name: 'x' });
    const account = s.admin.createAccount({});
    await s.close();
    sb = undefined;
    const files = readdirSync(dir);
    const text = files.map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    for (const key of [s.apiKey, extra.api_key, account.api_key]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(7)); // nor the part after the prefix
    }
    const state = readState(dir);
    expect(state.keys.length).toBeGreaterThanOrEqual(3);
    expect(state.keys.every((k) => /^[0-9a-f]{64}$/.test(k.hash))).toBe(true);
    // The same keys still work after a restart from that state.
    const again = await start({ stateDir: dir });
    expect(
      (await call(again.url, 'POST', '/contact', { key: extra.api_key, body: contact })).status,
    ).toBe(200);
  });

  it('compares keys and the admin token in constant time (timingSafeEqual over fixed-length digests)', () => {
    const src = (f: string) =>
      readFileSync(fileURLToPath(new URL(`../../src/sandbox/${f}`, import.meta.url)), 'utf8');
    expect(src('keys.ts')).toMatch(/timingSafeEqual\(x, y\)/);
    // Every comparison of a presented secret goes through sameHash of two SHA-256 digests, never ===.
    expect(src('store.ts')).toMatch(/sameHash\(k\.hash, h\)/);
    expect(src('admin-http.ts')).toMatch(
      /sameHash\(hashSecret\(token\), hashSecret\(ctx\.store\.adminToken\)\)/,
    );
    for (const f of ['store.ts', 'admin-http.ts', 'server.ts'])
      expect(src(f)).not.toMatch(/(token|key|presented|hash)\s*===?\s*\w*(token|key|hash)/i);
  });

  it('__proto__ and constructor in bodies change nothing', async () => {
    const s = await start();
    const raw = `{"business_email":"jane@acme.com","__proto__":{"admin":true,"credits":1e9},"constructor":{"prototype":{"polluted":1}}}`;
    const r = await call(s.url, 'POST', '/contact', { key: s.apiKey, raw });
    expect([200, 400]).toContain(r.status);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(s.admin.getAccount(s.accountId)?.credits).toBeLessThanOrEqual(100_000);
    // In metadata they are unknown keys: refused, nothing charged.
    const meta = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      raw: `{"contacts":[{"business_email":"a@acme.com","custom_fields":{}}],"metadata":{"real_time_verification":false,"__proto__":{"business_email_exists":true}}}`,
    });
    expect(meta.status).toBe(400);
    // In custom_fields they are data, echoed exactly.
    const bulk = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      raw: `{"contacts":[{"business_email":"a@acme.com","custom_fields":{"__proto__":{"x":1},"constructor":"c"}}],"metadata":{"real_time_verification":false}}`,
    });
    expect([200, 202]).toContain(bulk.status);
    const res = await call(s.url, 'GET', `/contacts/results/${bulk.json.job_id}.json`, {
      key: s.apiKey,
    });
    expect(JSON.parse(res.text).contacts[0].custom_fields).toEqual(
      JSON.parse('{"__proto__":{"x":1},"constructor":"c"}'),
    );
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    await goodClientWorks(s);
  });

  it('a body over the limit is 413 (declared or streamed), and the service keeps serving', async () => {
    const s = await start({ maxBodyBytes: 10_000 });
    const big = await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      raw: `{"contacts":[${'"x",'.repeat(5000)}"x"]}`,
    });
    expect(big.status).toBe(413);
    await goodClientWorks(s);
  });

  it('an absurd Content-Length is refused at once without reading, others unharmed', async () => {
    const s = await start();
    const { socket, text, closed } = await rawSocket(s.url);
    socket.write(
      `POST /contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n{`,
    );
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 (400|413)/);
    const { socket: s2, text: t2, closed: c2 } = await rawSocket(s.url);
    s2.write(
      `POST /contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\nContent-Length: 9007199254740991\r\n\r\n{`,
    );
    await c2;
    expect(t2()).toMatch(/^HTTP\/1\.1 413/);
    await goodClientWorks(s);
    expect(s.admin.stats().jobs_submitted).toBe(0);
  });

  it('malformed JSON is 400 with a message, and other clients are unharmed', async () => {
    const s = await start();
    for (const raw of [
      '{',
      '{"contacts": [}',
      '\u0000\u0001',
      'null',
      '[]',
      '"x"',
      '{"contacts": "x"}',
    ])
      expect((await call(s.url, 'POST', '/contacts', { key: s.apiKey, raw })).status).toBe(400);
    await goodClientWorks(s);
    expect(s.admin.stats().jobs_submitted).toBe(0);
  });

  it('slow headers and slow bodies (slowloris) are cut off by a request timeout while a good client keeps working', async () => {
    expect(resolveSandboxOptions().requestTimeoutMs).toBe(30_000); // on by default
    const s = await start({ requestTimeoutMs: 400 });
    const slowBody = await rawSocket(s.url);
    slowBody.socket.write(
      `POST /contact HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    const slowHeaders = await rawSocket(s.url);
    slowHeaders.socket.write('POST /contact HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => {
      if (!slowBody.socket.destroyed) slowBody.socket.write(' ');
      if (!slowHeaders.socket.destroyed) slowHeaders.socket.write('X-A: b\r\n');
    }, 50);
    const started = Date.now();
    try {
      await goodClientWorks(s);
      await Promise.all([slowBody.closed, slowHeaders.closed]);
    } finally {
      clearInterval(drip);
    }
    expect(Date.now() - started).toBeLessThan(5000);
    // The slow body is answered 408 (its headers were complete); the slow headers may
    // just be closed, as Node does when no request was ever read.
    expect(slowBody.text()).toMatch(/^HTTP\/1\.1 408/);
    await goodClientWorks(s);
  });
});

describe('sandbox admin paths (regression: a malformed %-escape answered 500 "URIError")', () => {
  it('answers 400 to a malformed escape in an admin path', async () => {
    const s = await start();
    for (const path of ['/_sandbox/keys/%E0%A4%A', '/_sandbox/%ZZ']) {
      const r = await call(s.url, 'DELETE', path, { key: s.adminToken });
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(/invalid %-escape/);
    }
    expect(s.admin.stats().requests_by_status['500']).toBeUndefined();
  });
});
