import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startSandbox,
  adminCreateKey,
  adminListKeys,
  adminRevokeKey,
  type SandboxHandle,
} from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';
import { readState, stateFile } from '../sandbox/state-helper.js';

const open: SandboxHandle[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
async function start(o: Parameters<typeof startSandbox>[0] = {}) {
  const s = await startSandbox(o);
  open.push(s);
  return s;
}

describe('sandbox admin API over HTTP', () => {
  it('refuses a missing or wrong admin token, and API keys, with 401', async () => {
    const s = await start();
    expect((await call(s.url, 'GET', '/_sandbox/keys')).status).toBe(401);
    expect((await call(s.url, 'GET', '/_sandbox/keys', { key: 'nope' })).status).toBe(401);
    expect((await call(s.url, 'GET', '/_sandbox/keys', { key: s.apiKey })).status).toBe(401);
  });

  it('accounts: create, read, update balances and suspension; 404 for an unknown one', async () => {
    const s = await start();
    const admin = { key: s.adminToken };
    const created = await call(s.url, 'POST', '/_sandbox/accounts', {
      ...admin,
      body: { credits: 5, verification_credits: 2 },
    });
    expect(created.status).toBe(201);
    expect(created.json.api_key).toMatch(/^sk_sbx_/);
    const id = created.json.account_id;
    const upd = await call(s.url, 'PUT', `/_sandbox/accounts/${id}`, {
      ...admin,
      body: { credits: 9, suspended: true },
    });
    expect(upd.json).toEqual({
      account_id: id,
      credits: 9,
      verification_credits: 2,
      suspended: true,
    });
    const c = await call(s.url, 'POST', '/contact', {
      key: created.json.api_key,
      body: { business_email: 'a@b.co' },
    });
    expect(c.status).toBe(403);
    expect(
      (
        await call(s.url, 'PUT', '/_sandbox/accounts/acc_missing', {
          ...admin,
          body: { credits: 1 },
        })
      ).status,
    ).toBe(404);
    const bad = await call(s.url, 'PUT', `/_sandbox/accounts/${id}`, {
      ...admin,
      body: { credits: -1, typo: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'credits',
      'typo',
    ]);
    expect((await call(s.url, 'DELETE', '/_sandbox/accounts', admin)).status).toBe(405);
  });

  it('keys: created once in clear, listed masked with revoked ones marked, revoked on the next request', async () => {
    const s = await start();
    const created = await call(s.url, 'POST', '/_sandbox/keys', {
      key: s.adminToken,
      body: { name: 'ci', description: 'pipeline' },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'ci' });
    const key: string = created.json.api_key;
    const listed = await call(s.url, 'GET', '/_sandbox/keys', { key: s.adminToken });
    expect(listed.text).not.toContain(key);
    expect(listed.text).not.toContain(s.apiKey);
    const entry = listed.json.keys.find((k: { id: string }) => k.id === created.json.id);
    expect(entry).toMatchObject({
      name: 'ci',
      description: 'pipeline',
      account_id: s.accountId,
      revoked: false,
      masked: `sk_sbx_…${key.slice(-4)}`,
    });
    expect(
      (await call(s.url, 'POST', '/email-verification', { key, body: { email: 'a@b.co' } })).status,
    ).toBe(200);
    expect(
      (await call(s.url, 'DELETE', `/_sandbox/keys/${created.json.id}`, { key: s.adminToken }))
        .status,
    ).toBe(200);
    expect(
      (await call(s.url, 'POST', '/email-verification', { key, body: { email: 'a@b.co' } })).status,
    ).toBe(401);
    expect(
      (await call(s.url, 'GET', '/_sandbox/keys', { key: s.adminToken })).json.keys.find(
        (k: { id: string }) => k.id === created.json.id,
      ).revoked,
    ).toBe(true);
    expect(
      (await call(s.url, 'DELETE', '/_sandbox/keys/key_missing', { key: s.adminToken })).status,
    ).toBe(404);
    expect(
      (
        await call(s.url, 'POST', '/_sandbox/keys', {
          key: s.adminToken,
          body: { account_id: 'acc_missing' },
        })
      ).status,
    ).toBe(404);
  });

  it('stats count jobs, records, credits and requests by status and path', async () => {
    const s = await start();
    await call(s.url, 'POST', '/contacts', {
      key: s.apiKey,
      body: { contacts: [contact(0), contact(1)] },
    });
    await call(s.url, 'POST', '/email-verification', { key: s.apiKey, body: { email: 'a@b.co' } });
    await call(s.url, 'POST', '/contact', { body: {} });
    const st = await call(s.url, 'GET', '/_sandbox/stats', { key: s.adminToken });
    expect(st.json).toEqual({
      jobs_submitted: 1,
      records_submitted: 2,
      credits_charged: 2,
      verification_credits_charged: 1,
      requests_by_status: { '200': 2, '401': 1 },
      requests_by_path: { '/contacts': 1, '/email-verification': 1, '/contact': 1 },
    });
  });

  it('the admin client functions create, list and revoke keys of a running sandbox', async () => {
    const s = await start();
    const t = { url: s.url, adminToken: s.adminToken };
    const k = await adminCreateKey(t, { name: 'x' });
    expect((await adminListKeys(t)).map((l) => l.id)).toContain(k.id);
    await adminRevokeKey(t, k.id);
    expect((await adminListKeys(t)).find((l) => l.id === k.id)?.revoked).toBe(true);
    await expect(adminRevokeKey(t, 'key_missing')).rejects.toMatchObject({ code: 'API_NOT_FOUND' });
    await expect(adminListKeys({ ...t, adminToken: 'wrong' })).rejects.toMatchObject({
      code: 'AUTH_INVALID',
    });
  });
});

describe('sandbox --state persistence', () => {
  it('keeps accounts, keys, jobs, the admin token and the clock across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-sbx-'));
    dirs.push(dir);
    const a = await startSandbox({ stateDir: dir, credits: 10 });
    const job = await call(a.url, 'POST', '/contacts', {
      key: a.apiKey,
      body: { contacts: [contact(0)] },
    });
    const revoked = a.admin.createKey({ name: 'old' });
    a.admin.revokeKey(revoked.id);
    a.admin.advanceClock(1234);
    await a.close();
    const file = stateFile(dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(a.apiKey);
    const b = await start({ stateDir: dir, credits: 999 });
    expect(b.adminToken).toBe(a.adminToken);
    expect(b.accountId).toBe(a.accountId);
    expect(b.admin.getAccount(b.accountId)?.credits).toBe(9);
    // The old key still works; the new one printed at start works too; the revoked one does not.
    const res = await call(b.url, 'GET', `/contacts/results/${job.json.job_id}.json`, {
      key: a.apiKey,
    });
    expect(res.status).toBe(200);
    expect(res.json.contacts[0].custom_fields).toEqual({ row: 0 });
    expect(
      (
        await call(b.url, 'POST', '/email-verification', {
          key: b.apiKey,
          body: { email: 'a@b.co' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call(b.url, 'POST', '/email-verification', {
          key: revoked.api_key,
          body: { email: 'a@b.co' },
        })
      ).status,
    ).toBe(401);
    expect(
      (await call(b.url, 'GET', '/_sandbox/clock', { key: b.adminToken })).json.offset_ms,
    ).toBe(1234);
  });
  it('an Idempotency-Key replay after a restart gives the download_url of the new address', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-sbx-'));
    dirs.push(dir);
    const headers = { 'idempotency-key': 'restart-1' };
    const body = { contacts: [contact(0)] };
    const a = await startSandbox({ stateDir: dir });
    const first = await call(a.url, 'POST', '/contacts', { key: a.apiKey, body, headers });
    await a.close();
    // Neither the address nor the balance is frozen into the saved job.
    const text = readFileSync(stateFile(dir), 'utf8');
    expect(text).not.toContain('download_url');
    expect(text).not.toContain('remaining_credits');
    const b = await start({ stateDir: dir });
    const replay = await call(b.url, 'POST', '/contacts', { key: b.apiKey, body, headers });
    expect(replay.status).toBe(200);
    expect(replay.json.job_id).toBe(first.json.job_id);
    expect(replay.json.expiration_date).toBe(first.json.expiration_date);
    expect(replay.json.download_url).toBe(`${b.url}/contacts/results/${first.json.job_id}.json`);
  });

  it('loads a state file of the previous version (jobs holding their submission answer)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'enrich-sbx-'));
    dirs.push(dir);
    const headers = { 'idempotency-key': 'old-1' };
    const body = { companies: [{ company_name: 'Acme', custom_fields: { r: 1 } }] };
    const a = await startSandbox({ stateDir: dir });
    const first = await call(a.url, 'POST', '/companies', { key: a.apiKey, body, headers });
    await a.close();
    // Rewrite the state as the whole-state file of an earlier version, its jobs holding answers.
    const file = join(dir, 'sandbox-state.json');
    const state = readState(dir) as unknown as { jobs: Record<string, unknown>[] };
    rmSync(stateFile(dir));
    const job = state.jobs[0] as Record<string, unknown>;
    delete job.records;
    delete job.charged;
    job.response = {
      job_id: first.json.job_id,
      download_url: `http://127.0.0.1:1/companies/results/${first.json.job_id}.json`,
      expiration_date: first.json.expiration_date,
    };
    writeFileSync(file, JSON.stringify(state));
    const b = await start({ stateDir: dir });
    const replay = await call(b.url, 'POST', '/companies', { key: b.apiKey, body, headers });
    expect(replay.json).toEqual({
      job_id: first.json.job_id,
      download_url: `${b.url}/companies/results/${first.json.job_id}.json`,
      expiration_date: first.json.expiration_date,
      remaining_credits: first.json.remaining_credits,
    });
    const res = await call(b.url, 'GET', new URL(replay.json.download_url).pathname, {
      key: b.apiKey,
    });
    expect(res.status).toBe(200);
    expect(res.json.companies[0].custom_fields).toEqual({ r: 1 });
    // Migrated once: the log replaces the old file, which is kept aside.
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.migrated`)).toBe(true);
    expect(readState(dir).jobs.map((j) => j.id)).toEqual([first.json.job_id]);
  });
});
