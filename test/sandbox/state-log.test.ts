import { afterEach, describe, expect, it } from 'vitest';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState, type OpenState } from '../../src/sandbox/persist.js';
import { eventPieces, parseLine } from '../../src/sandbox/state-lines.js';
import type { Job } from '../../src/sandbox/store.js';
import { readState, stateFile } from './state-helper.js';

const dirs: string[] = [];
const open: OpenState[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sbx-log-'));
  dirs.push(d);
  return d;
}

async function openIn(dir: string, minBytes = 64 * 1024 * 1024): Promise<OpenState> {
  const s = await openState(dir, { minBytes });
  open.push(s);
  return s;
}

async function reopen(s: OpenState, dir: string, minBytes?: number): Promise<OpenState> {
  await s.log.close();
  open.splice(open.indexOf(s), 1);
  return openIn(dir, minBytes);
}

function job(
  id: string,
  account: string,
  records: unknown[],
  expires = Date.now() + 3_600_000,
): Job {
  return {
    id,
    kind: 'contacts',
    account_id: account,
    created_at: 1,
    ready_at: 1,
    expires_at: expires,
    total: records.length,
    records: records.length,
    charged: records.length,
    results: JSON.stringify(records),
  };
}

describe('the --state log', () => {
  it('replays every change: accounts, keys, charges, clock, jobs with their debit, drops', async () => {
    const dir = tempDir();
    const a = await openIn(dir);
    expect(a.restored).toBe(false);
    const acc = a.store.createAccount(100, 10);
    const { record } = a.store.createKey(acc.id, 'k', '', 0);
    a.store.revokeKey(record.id);
    a.store.charge(acc, 3, 1);
    a.store.setClockOffset(42);
    // Results whose text holds what looks like the line's own keys stay byte for byte.
    const tricky = [{ custom_fields: { s: ',"results":[1]}', n: '\n"}' } }];
    a.store.addJob(job('j1', acc.id, tricky), 5);
    a.store.addJob(job('j2', acc.id, [{ x: 1 }], 10));
    a.store.purgeExpired(100);
    await a.log.persisted();
    expect(statSync(stateFile(dir)).mode & 0o777).toBe(0o600);
    const b = await reopen(a, dir);
    expect(b.restored).toBe(true);
    expect(b.store.adminToken).toBe(a.store.adminToken);
    expect(b.store.accounts.get(acc.id)).toEqual({
      id: acc.id,
      credits: 92,
      verification_credits: 9,
      suspended: false,
    });
    expect(b.store.keys.get(record.id)?.revoked).toBe(true);
    expect(b.store.clockOffset).toBe(42);
    expect([...b.store.jobs.keys()]).toEqual(['j1']);
    expect(b.store.jobs.get('j1')?.results).toBe(JSON.stringify(tricky));
    expect(b.store.usageOf(acc.id)).toMatchObject({ jobs: 1 });
  });

  it('a change that cannot be written does not happen (no charge without its job)', async () => {
    const dir = tempDir();
    const a = await openIn(dir);
    const acc = a.store.createAccount(100, 10);
    a.store.record = () => {
      throw new Error('ENOSPC');
    };
    expect(() => a.store.addJob(job('j1', acc.id, [{ x: 1 }]), 7)).toThrow(/ENOSPC/);
    expect(a.store.accounts.get(acc.id)?.credits).toBe(100);
    expect(a.store.jobs.size).toBe(0);
  });

  it('cuts a torn last line off and keeps everything before it', async () => {
    const dir = tempDir();
    const a = await openIn(dir);
    const acc = a.store.createAccount(100, 10);
    a.store.addJob(job('j1', acc.id, [{ x: 1 }]), 1);
    await a.log.close();
    open.splice(0);
    const before = statSync(stateFile(dir)).size;
    // A kill in the middle of writing a job: its line has no end.
    const [head = ''] = eventPieces({ t: 'job', job: job('j2', acc.id, [{ x: 2 }]) });
    appendFileSync(stateFile(dir), `${head}[{"x":`);
    const b = await openIn(dir);
    expect(b.tornBytes).toBeGreaterThan(0);
    expect(statSync(stateFile(dir)).size).toBe(before);
    expect([...b.store.jobs.keys()]).toEqual(['j1']);
    expect(b.store.accounts.get(acc.id)?.credits).toBe(99);
    // The log goes on after the cut.
    b.store.addJob(job('j3', acc.id, [{ x: 3 }]), 1);
    const c = await reopen(b, dir);
    expect([...c.store.jobs.keys()]).toEqual(['j1', 'j3']);
    // A last line that ends but does not read (zeros after a power loss) is torn too.
    await c.log.close();
    open.splice(0);
    appendFileSync(stateFile(dir), Buffer.alloc(64));
    expect((await openIn(dir)).tornBytes).toBe(64);
  });

  it('refuses a log damaged before its last line, naming the file and the line', async () => {
    const dir = tempDir();
    const a = await openIn(dir);
    a.store.createAccount(1, 1);
    a.store.createAccount(2, 2);
    await a.log.close();
    open.splice(0);
    const lines = readFileSync(stateFile(dir), 'utf8').split('\n');
    lines[2] = '{"t":"account",garbage';
    writeFileSync(stateFile(dir), lines.join('\n'));
    await expect(openState(dir, { minBytes: 1 << 20 })).rejects.toThrow(/line 3/);
    writeFileSync(stateFile(dir), '{"hello":1}\n');
    await expect(openState(dir, { minBytes: 1 << 20 })).rejects.toThrow(/not a sandbox state log/);
  });

  it('compacts when mostly dead weight: expired jobs and old balances go', async () => {
    const dir = tempDir();
    const a = await openIn(dir, 20_000);
    const acc = a.store.createAccount(1_000_000, 10);
    const big = Array.from({ length: 40 }, (_, i) => ({ row: i, pad: 'x'.repeat(40) }));
    for (let i = 0; i < 20; i++) {
      a.store.addJob(job(`old${i}`, acc.id, big, 1_000), 1);
      a.store.charge(acc, 1);
    }
    a.store.purgeExpired(2_000);
    a.store.addJob(job('live', acc.id, big), 1);
    await a.log.settled();
    expect(a.log.compactions).toBe(1);
    a.store.charge(acc, 1);
    await a.log.persisted();
    expect(statSync(stateFile(dir)).size).toBeLessThan(20_000);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const b = await reopen(a, dir);
    expect([...b.store.jobs.keys()]).toEqual(['live']);
    expect(b.store.accounts.get(acc.id)?.credits).toBe(1_000_000 - 20 - 20 - 1 - 1);
    expect(readState(dir).jobs[0]?.results).toBe(JSON.stringify(big));
  });

  it('changes made while a compaction streams its snapshot are in the new log', async () => {
    const dir = tempDir();
    const a = await openIn(dir);
    const acc = a.store.createAccount(1_000_000, 10);
    for (let i = 0; i < 300; i++) a.store.addJob(job(`j${i}`, acc.id, [{ i }]), 1);
    let done = false;
    const compaction = a.log.compact().then(() => (done = true));
    let during = 0;
    while (!done) {
      await new Promise((r) => setImmediate(r));
      a.store.charge(acc, 1);
      a.store.addJob(job(`during${during}`, acc.id, [{ during }]), 1);
      during++;
    }
    await compaction;
    expect(a.log.compactions).toBe(1);
    expect(during).toBeGreaterThan(1);
    await a.log.persisted();
    const b = await reopen(a, dir);
    expect(b.store.jobs.size).toBe(300 + during);
    expect(b.store.accounts.get(acc.id)?.credits).toBe(1_000_000 - 300 - 2 * during);
  });

  it('migrates a whole-state file of an earlier version once, and keeps it aside', async () => {
    const dir = tempDir();
    const legacy = {
      version: 1,
      admin_token: 'sbx_admin_old',
      clock_offset: 5,
      accounts: [{ id: 'acc_1', credits: 7, verification_credits: 3, suspended: false }],
      keys: [],
      jobs: [{ ...job('j1', 'acc_1', [{ a: 1 }]), records: [{ a: 1 }], results: undefined }],
    };
    writeFileSync(join(dir, 'sandbox-state.json'), JSON.stringify(legacy));
    const s = await openIn(dir);
    expect(s.restored).toBe(true);
    expect(s.store.adminToken).toBe('sbx_admin_old');
    expect(s.store.jobs.get('j1')?.results).toBe('[{"a":1}]');
    expect(existsSync(join(dir, 'sandbox-state.json.migrated'))).toBe(true);
    expect(parseLine(readFileSync(stateFile(dir), 'utf8').split('\n')[0] as string)).toMatchObject({
      t: 'meta',
      version: 2,
    });
  });
});
