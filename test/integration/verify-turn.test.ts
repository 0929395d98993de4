import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type EnrichClient } from '../../src/index.js';
import { verifyEmailsFile } from '../../src/bulk/verify-emails.js';
import { claimPath, claimsDir } from '../../src/pipeline/verify/address-claims.js';
import { deadPid } from '../helpers/pids.js';
import { SANDBOX_MODES, sandboxPerTest, tempDir } from './bulk-harness.js';

// Two verification runs of different lists of one account at once (a copy of a list that grew,
// a cron job beside a run by hand): an address one of them is sending is waited for by the
// other, which then takes its answer from the results cache (address-claims.ts). Before session
// 20 both sent it; in session 20 the later run waited for the whole earlier run, even when the
// lists shared nothing.

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function rig(specOnly = false, latencyMs = 30) {
  const s = await sandbox({ specOnly, faults: { latency_ms: latencyMs } });
  const dir = await tempDir();
  const runsDir = join(dir, 'runs');
  const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
  clients.push(client);
  const paid = () => s.admin.stats().verification_credits_charged;
  const warnings: string[] = [];
  const list = async (name: string, emails: string[]) => {
    await writeFile(join(dir, name), `email\n${emails.join('\n')}\n`);
    return join(dir, name);
  };
  const leads = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `lead${from + i}@firm${i % 5}.com`);
  const verify = (input: string, more: Record<string, unknown> = {}) =>
    verifyEmailsFile({
      input,
      output: `${input}.out.csv`,
      service: { client, baseUrl: s.url },
      runsDir,
      cacheDir: join(dir, 'cache'),
      concurrency: 2,
      onWarning: (w) => warnings.push(w),
      ...more,
    });
  /** Another live process (this one's parent) holds the claim of `address`. */
  const heldElsewhere = async (address: string) => {
    const claim = claimPath(runsDir, client.account, address);
    await mkdir(claimsDir(runsDir, client.account), { recursive: true });
    await writeFile(claim, String(process.ppid));
    return claim;
  };
  return { s, dir, runsDir, client, paid, warnings, list, leads, verify, heldElsewhere };
}

/**
 * A verification run of one address against a service that refuses it for an hour (a
 * spec-only service sends no Retry-After: its bare 429s go on), resolved once the refusal came
 * with the run waiting; `resume` verifies the list again as a new process would (its client
 * not told to wait).
 */
async function refusedForAnHour(specOnly: boolean) {
  const r = await rig(specOnly, 0);
  const refusals = specOnly ? { rates: { 429: 1 } } : {};
  r.s.admin.setFaults({ ...refusals, next: [{ status: 429, retry_after_s: 3600 }] });
  const stop = new AbortController();
  const input = await r.list('list.csv', ['wait@firm.com']);
  const running = r.verify(input, { signal: stop.signal, timeoutMs: 2 * 3600_000 });
  running.catch(() => undefined); // awaited by the test
  while (r.client.throttled() === 0) await delay(5);
  const resume = (more: Record<string, unknown> = {}) => {
    r.s.admin.setFaults({});
    const fresh = createClient({ baseUrl: r.s.url, apiKey: r.s.apiKey });
    clients.push(fresh);
    return r.verify(input, { service: { client: fresh, baseUrl: r.s.url }, ...more });
  };
  return { ...r, stop, running, resume };
}

describe('verify-emails: one request per address at a time across runs of an account', () => {
  it.each(SANDBOX_MODES)(
    'two runs of lists sharing 20 addresses, side by side: each address is paid for once ($name)',
    async ({ specOnly }) => {
      const { paid, list, leads, verify } = await rig(specOnly);
      const monday = await list('monday.csv', leads(0, 20));
      const tuesday = await list('tuesday.csv', leads(0, 25)); // monday's 20 and 5 more
      const first = verify(monday);
      while (paid() < 2) await delay(5);
      const second = await verify(tuesday);
      const done = await first;
      expect([done.exitCode, second.exitCode]).toEqual([0, 0]);
      expect(paid()).toBe(25); // each address once
      // Every shared address was sent by one run and taken from the cache by the other.
      expect(done.sent + second.sent).toBe(25);
      expect(done.cacheHits + second.cacheHits).toBe(20);
    },
  );

  it('a run of a list that shares no address with a run going on does not wait for it', async () => {
    const { paid, warnings, list, leads, verify } = await rig();
    let firstDone = false;
    const first = verify(await list('monday.csv', leads(0, 40))).finally(() => {
      firstDone = true;
    });
    while (paid() < 2) await delay(5);
    const other = await verify(await list('other.csv', leads(100, 5)));
    // 40 requests of 30 ms two at a time take 600 ms at least; the 5 others were done first.
    expect([other.exitCode, other.sent, firstDone]).toEqual([0, 5, false]);
    expect(warnings).toEqual([]);
    expect((await first).exitCode).toBe(0);
    expect(paid()).toBe(45);
  });

  it.each(SANDBOX_MODES)(
    'an address another run is sending is waited for, then taken from the cache: never paid twice ($name)',
    async ({ specOnly }) => {
      // Requests of 400 ms: the second run reaches the address while the first still sends it.
      const { runsDir, client, paid, warnings, list, verify } = await rig(specOnly, 400);
      const first = verify(await list('one.csv', ['shared@firm.com']));
      const claim = claimPath(runsDir, client.account, 'shared@firm.com');
      while (!existsSync(claim)) await delay(2);
      const second = await verify(await list('two.csv', ['shared@firm.com', 'own@firm.com']));
      expect([(await first).sent, second.sent, second.cacheHits, paid()]).toEqual([1, 1, 1, 2]);
      expect(warnings).toEqual([
        expect.stringMatching(
          /^waiting for another run in this process, which is verifying an address this list holds too: its answer is then taken from the results cache/,
        ),
      ]);
      expect(await readdir(claimsDir(runsDir, client.account))).toEqual([]);
    },
  );

  it('an address another process still sends when the time is up is not sent (its row says so, exit 3); the rest are', async () => {
    const { paid, warnings, list, verify, heldElsewhere } = await rig();
    const claim = await heldElsewhere('stuck@firm.com');
    const input = await list('list.csv', ['a@firm.com', 'b@firm.com', 'stuck@firm.com']);
    const done = await verify(input, { timeoutMs: 1500 });
    expect([done.exitCode, done.sent, paid()]).toEqual([3, 2, 2]);
    const out = await readFile(`${input}.out.csv`, 'utf8');
    expect(out).toContain(
      `not sent: another enrich process (pid ${process.ppid}) was still verifying this address when this run's time was up (timeoutMs)`,
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^waiting for another enrich process \\(pid ${process.ppid}\\)`),
      ),
    ]);
    // Once that process is done, the same run sends it, and only it.
    await writeFile(claim, String(deadPid()));
    const next = await verify(input);
    expect([next.exitCode, next.resumed, next.sent, paid()]).toEqual([0, true, 1, 3]);
  });

  it('Ctrl-C while waiting for an address another process sends: the run stops as interrupted, the address not sent', async () => {
    const { paid, warnings, list, verify, heldElsewhere } = await rig();
    await heldElsewhere('stuck@firm.com');
    const stop = new AbortController();
    const input = await list('list.csv', ['a@firm.com', 'stuck@firm.com']);
    const running = verify(input, { signal: stop.signal });
    while (warnings.length === 0) await delay(5);
    stop.abort();
    await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
    expect(paid()).toBe(1);
  });

  it.each(SANDBOX_MODES)(
    'Ctrl-C while a verification waits out a 429 ends the run at once (not after the hour); the same run verifies it once ($name)',
    async ({ specOnly }) => {
      const { paid, stop, running, resume } = await refusedForAnHour(specOnly);
      const stopped = Date.now();
      stop.abort();
      await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED', exitCode: 130 });
      expect([Date.now() - stopped < 10_000, paid()]).toEqual([true, 0]);
      const next = await resume();
      const counts = [next.exitCode, next.resumed, next.sent, next.unconfirmed, paid()];
      expect(counts).toEqual([0, true, 1, 0, 1]);
    },
  );

  it.each(SANDBOX_MODES)(
    'killed while a verification waits out a 429 (the journal as it is then): the resume knows it was not processed, and verifies it once ($name)',
    async ({ specOnly }) => {
      const { dir, runsDir, paid, stop, running, resume } = await refusedForAnHour(specOnly);
      await delay(100);
      // The state a SIGKILL would leave: the journal on disk now (without its lock).
      const killed = join(dir, 'killed');
      await cp(runsDir, killed, { recursive: true, filter: (p) => basename(p) !== 'lock' });
      stop.abort();
      await running.catch(() => undefined);
      const next = await resume({ runsDir: killed });
      const counts = [next.exitCode, next.resumed, next.sent, next.unconfirmed, paid()];
      expect(counts).toEqual([0, true, 1, 0, 1]);
    },
  );

  it('a claim left by a process that died is taken over at once, and given back', async () => {
    const { runsDir, client, paid, warnings, list, verify } = await rig();
    const claim = claimPath(runsDir, client.account, 'lead0@firm0.com');
    await mkdir(claimsDir(runsDir, client.account), { recursive: true });
    await writeFile(claim, String(deadPid()));
    const done = await verify(await list('list.csv', ['lead0@firm0.com', 'lead1@firm1.com']));
    expect([done.exitCode, done.sent, paid()]).toEqual([0, 2, 2]);
    expect(warnings).toEqual([]);
    expect(await readdir(claimsDir(runsDir, client.account))).toEqual([]);
  });

  it('a run that neither reads nor fills the cache (--no-cache) claims nothing and waits for nothing', async () => {
    const { runsDir, client, paid, warnings, list, verify, heldElsewhere } = await rig();
    await heldElsewhere('lead0@firm0.com');
    const done = await verify(await list('list.csv', ['lead0@firm0.com']), { cache: false });
    expect([done.exitCode, done.sent, paid()]).toEqual([0, 1, 1]);
    expect(warnings).toEqual([]);
    expect(await readdir(claimsDir(runsDir, client.account))).toHaveLength(1); // the other's, only
  });

  it.each(SANDBOX_MODES)(
    'a --refresh run takes part too: an address it is sending is waited for by a run beside it, then taken from the cache ($name)',
    async ({ specOnly }) => {
      const { runsDir, client, paid, list, verify } = await rig(specOnly, 400);
      const first = verify(await list('one.csv', ['shared@firm.com']), { refresh: true });
      const claim = claimPath(runsDir, client.account, 'shared@firm.com');
      // A --refresh run that claimed nothing would never make this file.
      for (let i = 0; !existsSync(claim); i++) {
        if (i > 300) throw new Error('the --refresh run never claimed the address');
        await delay(2);
      }
      const second = await verify(await list('two.csv', ['shared@firm.com', 'own@firm.com']));
      expect([(await first).sent, second.sent, second.cacheHits, paid()]).toEqual([1, 1, 1, 2]);
    },
  );
});
