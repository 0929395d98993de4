import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await startSandbox({ maxBodyBytes: 4096, maxBatch: 5 });
});
afterAll(() => sb.close());

const post = (path: string, body: unknown) => call(sb.url, 'POST', path, { key: sb.apiKey, body });
const paths = (a: { json: { errors: { path: string }[] } }) => a.json.errors.map((e) => e.path);

describe('sandbox validation (400 naming every offending field)', () => {
  it.each([
    ['/contact', { first_name: 'Jane', last_name: 'Doe' }, ['(body)']],
    ['/contact', { business_email: 'a@b.co', first_name: '' }, ['first_name']],
    ['/contact', { business_email: 'x'.repeat(256) }, ['business_email']],
    [
      '/contact',
      { business_email: 'a@b.co', metadata: { mobile_phone_exists: true } },
      ['metadata.mobile_phone_exists'],
    ],
    ['/contact', { business_email: 'a@b.co', colour: 'red' }, ['colour']],
    [
      '/contact',
      { business_email: 'a@b.co', metadata: { business_email_exists: 'yes' } },
      ['metadata.business_email_exists'],
    ],
    ['/company', {}, ['(body)']],
    [
      '/company',
      { company_name: 'Acme', metadata: { top_matches_returned: 11 } },
      ['metadata.top_matches_returned'],
    ],
    [
      '/company',
      { company_name: 'Acme', metadata: { top_matches_returned: 0 } },
      ['metadata.top_matches_returned'],
    ],
    ['/company', { company_name: 'y'.repeat(256) }, ['company_name']],
    ['/email-verification', { email: 'not-an-email' }, ['email']],
    ['/email-verification', {}, ['email']],
    [
      '/contacts',
      {
        contacts: [
          contact(0),
          { first_name: 'A', custom_fields: {} },
          contact(2, { last_name: '' }),
        ],
      },
      ['contacts[1]', 'contacts[2]', 'contacts[2].last_name'],
    ],
    ['/contacts', { contacts: [{ business_email: 'a@b.co' }] }, ['contacts[0].custom_fields']],
    ['/contacts', {}, ['contacts']],
    ['/companies', { companies: [{ custom_fields: {} }] }, ['companies[0]']],
    [
      '/companies',
      {
        companies: [{ company_name: 'A', custom_fields: {} }],
        metadata: { top_matches_returned: 1.5 },
      },
      ['metadata.top_matches_returned'],
    ],
  ])('POST %s %j -> 400 naming %j', async (path, body, expected) => {
    const a = await post(path, body);
    expect(a.status).toBe(400);
    expect(a.json).toMatchObject({ status: 400, error: 'Bad Request' });
    expect(typeof a.json.message).toBe('string');
    expect(paths(a).sort()).toEqual([...expected].sort());
  });

  it('refuses a batch over the max batch, saying the limit', async () => {
    const a = await post('/contacts', {
      contacts: Array.from({ length: 6 }, (_, i) => contact(i)),
    });
    expect(a.status).toBe(400);
    expect(a.json.message).toContain('at most 5');
    expect(paths(a)).toEqual(['contacts']);
  });

  it('refuses an empty batch', async () => {
    const a = await post('/companies', { companies: [] });
    expect(a.status).toBe(400);
  });

  it('refuses malformed JSON with 400', async () => {
    const a = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      raw: '{"business_email": ',
    });
    expect(a.status).toBe(400);
    expect(a.json.message).toMatch(/Malformed JSON/);
  });

  it('refuses a results job_id that is not a UUID with 400', async () => {
    const a = await call(sb.url, 'GET', '/contacts/results/not-a-uuid.json', { key: sb.apiKey });
    expect(a.status).toBe(400);
    expect(paths(a)).toEqual(['job_id']);
  });
});

describe('sandbox auth', () => {
  const exact401 = (a: { status: number; json: Record<string, unknown> }) => {
    expect(a.status).toBe(401);
    expect(Object.keys(a.json).sort()).toEqual(['error', 'message', 'status']);
    expect(a.json).toMatchObject({ status: 401, error: 'Unauthorized' });
  };

  it('401 without Authorization, with a wrong key, a malformed header, and a revoked key', async () => {
    exact401(await call(sb.url, 'POST', '/contact', { body: { business_email: 'a@b.co' } }));
    exact401(
      await call(sb.url, 'POST', '/contact', {
        key: 'sk_sbx_wrong',
        body: { business_email: 'a@b.co' },
      }),
    );
    exact401(
      await call(sb.url, 'GET', `/contacts/results/${crypto.randomUUID()}.json`, {
        headers: { authorization: 'Basic abc' },
      }),
    );
    const k = sb.admin.createKey({ name: 'temp' });
    const ok = await call(sb.url, 'POST', '/email-verification', {
      key: k.api_key,
      body: { email: 'a@b.co' },
    });
    expect(ok.status).toBe(200);
    expect(sb.admin.revokeKey(k.id)).toBe(true);
    exact401(
      await call(sb.url, 'POST', '/email-verification', {
        key: k.api_key,
        body: { email: 'a@b.co' },
      }),
    );
  });

  it('every 401 message says the key is invalid and why (api-spec.md section 7)', async () => {
    const k = sb.admin.createKey({ name: 'soon revoked' });
    sb.admin.revokeKey(k.id);
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /no Authorization: Bearer header was sent/],
      [{ authorization: 'Basic x' }, /not the Bearer scheme/],
      [{ authorization: sb.apiKey }, /not the Bearer scheme/],
      [{ authorization: 'Bearer' }, /no key after Bearer/],
      [{ authorization: 'Bearer   ' }, /no key after Bearer/],
      [{ authorization: `Bearer ${sb.apiKey} extra` }, /more than one word after Bearer/],
      [{ authorization: 'Bearer sk_sbx_wrong' }, /unknown or was revoked/],
      [{ authorization: `Bearer ${k.api_key}` }, /unknown or was revoked/],
    ];
    for (const [headers, why] of cases) {
      const a = await call(sb.url, 'POST', '/contact', {
        headers,
        body: { business_email: 'a@b.co' },
      });
      exact401(a);
      expect(a.json.message).toMatch(/^Invalid API key: /);
      expect(a.json.message).toMatch(why);
      // The presented key is never echoed back.
      expect(a.json.message).not.toContain(sb.apiKey);
      expect(a.json.message).not.toContain('sk_sbx_wrong');
    }
  });

  it('403 for a suspended account, 200 again once reinstated', async () => {
    const acc = sb.admin.createAccount();
    sb.admin.updateAccount(acc.account_id, { suspended: true });
    const a = await call(sb.url, 'POST', '/contact', {
      key: acc.api_key,
      body: { business_email: 'a@b.co' },
    });
    expect(a.status).toBe(403);
    expect(a.json).toMatchObject({ status: 403, error: 'Forbidden' });
    sb.admin.updateAccount(acc.account_id, { suspended: false });
    const b = await call(sb.url, 'POST', '/contact', {
      key: acc.api_key,
      body: { business_email: 'a@b.co' },
    });
    expect(b.status).toBe(200);
  });

  it('403 when verification credits are exhausted', async () => {
    const acc = sb.admin.createAccount({ verification_credits: 1 });
    const a = await call(sb.url, 'POST', '/email-verification', {
      key: acc.api_key,
      body: { email: 'a@b.co' },
    });
    expect(a.json.remaining_credits).toBe(0);
    const b = await call(sb.url, 'POST', '/email-verification', {
      key: acc.api_key,
      body: { email: 'a@b.co' },
    });
    expect(b.status).toBe(403);
    expect(b.json.message).toMatch(/verification credits/i);
  });
});

describe('sandbox start-up', () => {
  it('a port in use is a usage error, not a crash', async () => {
    const port = Number(new URL(sb.url).port);
    await expect(startSandbox({ port })).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('a port out of range or an address this machine does not have is a usage error naming what to change (regression: an internal error)', async () => {
    await expect(startSandbox({ port: 99_999 })).rejects.toMatchObject({
      code: 'USAGE',
      message: 'sandbox option port: expected a whole number from 0 to 65535, got 99999',
    });
    await expect(startSandbox({ port: 1.5 })).rejects.toMatchObject({ code: 'USAGE' });
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface has it, and binding sends nothing.
    await expect(startSandbox({ host: '192.0.2.1' })).rejects.toMatchObject({
      code: 'USAGE',
      message: 'sandbox: cannot listen on 192.0.2.1:0: EADDRNOTAVAIL',
      hint: 'no interface of this machine has that address: pick another --host (127.0.0.1 by default)',
    });
  });
});

describe('sandbox routes and bodies', () => {
  it('unknown route -> 404 JSON, wrong method -> 405 with Allow', async () => {
    const a = await call(sb.url, 'GET', '/nope', { key: sb.apiKey });
    expect(a.status).toBe(404);
    expect(a.json).toMatchObject({ status: 404, error: 'Not Found' });
    const b = await call(sb.url, 'GET', '/contact', { key: sb.apiKey });
    expect(b.status).toBe(405);
    expect(b.headers.allow).toBe('POST');
    expect(b.json.status).toBe(405);
  });

  it('413 for a body over the limit (declared Content-Length)', async () => {
    const a = await post('/contacts', {
      contacts: [contact(0, { custom_fields: { pad: 'x'.repeat(5000) } })],
    });
    expect(a.status).toBe(413);
    expect(a.json).toMatchObject({ status: 413, error: 'Payload Too Large' });
    expect(a.json.message).toContain('4096');
  });

  it('413 for a chunked body that grows past the limit, without buffering it', async () => {
    const { port } = new URL(sb.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(port), '127.0.0.1', () => {
        s.write(
          `POST /contact HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sb.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        );
        const chunk = 'x'.repeat(2000);
        for (let i = 0; i < 4; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      });
      let got = '';
      s.on('data', (d) => (got += d.toString()));
      s.on('close', () => resolve(got));
      s.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
  });

  it('__proto__ and constructor keys pollute nothing and custom_fields echo exactly', async () => {
    const raw = `{"contacts":[{"business_email":"a@b.co","custom_fields":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"id":7}}]}`;
    const job = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, raw });
    expect(job.status).toBe(200);
    const res = await call(sb.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: sb.apiKey,
    });
    expect(res.text).toContain(
      '"custom_fields":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"id":7}',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const top = await call(sb.url, 'POST', '/contact', {
      key: sb.apiKey,
      raw: '{"__proto__":{"business_email":"a@b.co"}}',
    });
    expect(top.status).toBe(400);
    expect(paths(top)).toContain('__proto__');
  });
});
