import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addressClaims,
  claimPath,
  claimsDir,
  CLAIM_POLL_MS,
  removeFreeClaims,
  type ClaimContext,
} from '../../src/pipeline/verify/address-claims.js';
import { identityOf } from '../../src/pipeline/journal/run-lock.js';
import { deadPid } from '../helpers/pids.js';

async function rig(over: Partial<ClaimContext> = {}) {
  const runsDir = join(await mkdtemp(join(tmpdir(), 'enrich-claims-')), 'runs');
  const told: string[] = [];
  const ctx: ClaimContext = {
    runsDir,
    account: 'acct-1',
    deadline: 10_000,
    now: () => 0,
    onWaiting: (t) => told.push(t),
    ...over,
  };
  /** Another live process (this one's parent) holds `address`; returns what frees it. */
  const heldElsewhere = async (address: string, pid = process.ppid) => {
    const path = claimPath(runsDir, 'acct-1', address);
    await mkdir(claimsDir(runsDir, 'acct-1'), { recursive: true });
    await writeFile(path, String(pid));
    return () => rm(path);
  };
  return { runsDir, ctx, told, heldElsewhere };
}

describe('address claims', () => {
  it('a free address is claimed at once, and its release leaves nothing behind', async () => {
    const { runsDir, ctx, told } = await rig();
    const claims = addressClaims(ctx);
    const claim = await claims.take('a@x.io');
    expect(claim).toEqual({ release: expect.any(Function), waited: false });
    const holder = `holder-${process.pid}`;
    const id = basename(claimPath(runsDir, 'acct-1', 'a@x.io'));
    expect((await readdir(claimsDir(runsDir, 'acct-1'))).sort()).toEqual([holder, id].sort());
    if ('release' in claim) await claim.release();
    expect(await readdir(claimsDir(runsDir, 'acct-1'))).toEqual([holder]);
    await claims.close();
    expect(await readdir(claimsDir(runsDir, 'acct-1'))).toEqual([]);
    expect(told).toEqual([]);
  });

  it('one address claimed twice in one process: the second waits until the first is given back', async () => {
    const { ctx, told } = await rig();
    const claims = addressClaims(ctx);
    const first = await claims.take('a@x.io');
    let second: Awaited<ReturnType<typeof claims.take>> | undefined;
    const taking = claims.take('a@x.io').then((c) => (second = c));
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS * 2));
    expect(second).toBeUndefined();
    // Another address is not held up.
    expect(await claims.take('b@x.io')).toMatchObject({ waited: false });
    if ('release' in first) await first.release();
    await taking;
    expect(second).toMatchObject({ waited: true });
    expect(told).toEqual([
      'waiting for another run in this process, which is verifying an address this list holds too: its answer is then taken from the results cache instead of being paid for twice',
    ]);
  });

  it('an address another process holds: says so once, and gives up at the deadline naming its pid', async () => {
    const { ctx, told, heldElsewhere } = await rig();
    await heldElsewhere('a@x.io');
    await heldElsewhere('b@x.io');
    const deadline = Date.now() + 3 * CLAIM_POLL_MS;
    const claims = addressClaims({ ...ctx, now: Date.now, deadline });
    const held = {
      heldBy: `another enrich process (pid ${process.ppid})`,
      details: { pid: process.ppid },
    };
    expect(await claims.take('a@x.io')).toEqual(held);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline - CLAIM_POLL_MS);
    expect(await claims.take('b@x.io')).toEqual(held);
    expect(told).toHaveLength(1);
  });

  it('gives up at once when the run is interrupted', async () => {
    const stop = new AbortController();
    stop.abort();
    const { ctx, heldElsewhere } = await rig({ signal: stop.signal });
    await heldElsewhere('a@x.io');
    expect(await addressClaims(ctx).take('a@x.io')).toMatchObject({ heldBy: expect.any(String) });
  });

  it('a claim left by a process that died is taken over (the run told of that process first); one freed while waited for is taken then (nothing told)', async () => {
    const died: number[] = [];
    const { ctx, heldElsewhere } = await rig({
      onHolderDied: async (pid) => {
        await new Promise((r) => setTimeout(r, 10));
        died.push(pid);
      },
    });
    const dead = deadPid();
    await heldElsewhere('a@x.io', dead);
    expect(await addressClaims(ctx).take('a@x.io')).toMatchObject({ waited: false });
    expect(died).toEqual([dead]);
    const free = await heldElsewhere('b@x.io');
    const taking = addressClaims(ctx).take('b@x.io');
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS / 2));
    await free();
    expect(await taking).toMatchObject({ waited: true });
    expect(died).toEqual([dead]);
  });

  it('a claim that cannot be made (the runs directory is a file) is sent unclaimed', async () => {
    const { runsDir, ctx } = await rig();
    await mkdir(join(runsDir, '..'), { recursive: true });
    await writeFile(runsDir, '');
    const claim = await addressClaims(ctx).take('a@x.io');
    expect(claim).toMatchObject({ waited: false });
    if ('release' in claim) await claim.release();
  });

  it('claims are per account', async () => {
    const { runsDir } = await rig();
    expect(claimsDir(runsDir, undefined)).toBe(join(runsDir, '.verify-claims-any'));
    expect(claimPath(runsDir, 'acct-1', 'a@x.io')).not.toBe(claimPath(runsDir, 'acct-2', 'a@x.io'));
    expect(claimPath(runsDir, 'acct-1', 'a@x.io')).not.toBe(claimPath(runsDir, 'acct-1', 'b@x.io'));
  });

  it('of many contenders for a stale claim, exactly one takes it over', async () => {
    const { runsDir, ctx, heldElsewhere } = await rig();
    await heldElsewhere('a@x.io', deadPid());
    // Three runs of this process, and the marks another process that died left: one claim.
    const stale = await readdir(claimsDir(runsDir, 'acct-1'));
    expect(stale).toHaveLength(1);
    let holding = 0;
    let most = 0;
    const turn = async () => {
      const claim = await addressClaims(ctx).take('a@x.io');
      if (!('release' in claim)) throw new Error('gave up');
      most = Math.max(most, ++holding);
      await new Promise((r) => setTimeout(r, 20));
      holding--;
      await claim.release();
    };
    await Promise.all([turn(), turn(), turn()]);
    expect(most).toBe(1); // one at a time; each took it in turn
  });

  it('a claim names its process (pid, and its identity where /proc tells it); one naming a pid reused since, or no pid, is stale', async () => {
    const { runsDir, ctx } = await rig();
    const claims = addressClaims(ctx);
    const claim = await claims.take('a@x.io');
    const [pid, identity] = (await readFile(claimPath(runsDir, 'acct-1', 'a@x.io'), 'utf8')).split(
      '\n',
    );
    expect([Number(pid), identity]).toEqual([process.pid, identityOf(process.pid) ?? '']);
    if ('release' in claim) await claim.release();
    for (const [address, text] of [
      ['b@x.io', `${process.ppid}\nanother boot 12345`], // the parent's pid, another process's identity
      ['c@x.io', '0'],
      ['d@x.io', '-5'],
      ['e@x.io', 'not a pid'],
    ]) {
      await writeFile(claimPath(runsDir, 'acct-1', address!), text!);
      expect(await claims.take(address!)).toMatchObject({ waited: false });
    }
    // With the identity its process has, the parent's claim is held.
    const parent = identityOf(process.ppid);
    if (parent !== undefined) {
      await writeFile(claimPath(runsDir, 'acct-1', 'f@x.io'), `${process.ppid}\n${parent}`);
      const soon = addressClaims({ ...ctx, now: Date.now, deadline: Date.now() + 150 });
      expect(await soon.take('f@x.io')).toMatchObject({
        heldBy: `another enrich process (pid ${process.ppid})`,
      });
    }
  });

  it('a stale claim another contender is replacing is left to it; a mark its contender left when it died is removed', async () => {
    const { runsDir, ctx, heldElsewhere } = await rig();
    await heldElsewhere('a@x.io', deadPid());
    const path = claimPath(runsDir, 'acct-1', 'a@x.io');
    const { ino } = await stat(path, { bigint: true });
    // A live contender's mark: this run waits for it.
    await writeFile(`${path}.stale-${ino}`, String(process.ppid));
    let got: unknown;
    const taking = addressClaims(ctx)
      .take('a@x.io')
      .then((c) => (got = c));
    await new Promise((r) => setTimeout(r, 60));
    expect(got).toBeUndefined();
    // It died before replacing the claim: its mark is removed, and the claim taken over.
    await writeFile(`${path}.stale-${ino}`, String(deadPid()));
    await taking;
    expect(got).toMatchObject({ waited: false });
    expect(await readFile(path, 'utf8')).toMatch(new RegExp(`^${process.pid}\n`));
    expect(
      (await readdir(claimsDir(runsDir, 'acct-1'))).filter((n) => n.includes('.stale-')),
    ).toEqual([]);
  });

  it('the claims directory removed between two claims is made again', async () => {
    const { runsDir, ctx } = await rig();
    const claims = addressClaims(ctx);
    const first = await claims.take('a@x.io');
    if ('release' in first) await first.release();
    await rm(claimsDir(runsDir, 'acct-1'), { recursive: true });
    const second = await claims.take('b@x.io');
    expect(second).toMatchObject({ waited: false });
    expect(await readdir(claimsDir(runsDir, 'acct-1'))).toHaveLength(2); // the holder and the claim
  });

  it('removeFreeClaims removes the claims, marks and holder files of processes gone, and the directory once empty', async () => {
    const { runsDir } = await rig();
    const dir = claimsDir(runsDir, 'acct-1');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'dead-claim'), String(deadPid()));
    await writeFile(join(dir, 'holder-1'), `${deadPid()}\nx`);
    await writeFile(join(dir, 'dead-claim.stale-7'), String(deadPid()));
    await writeFile(join(dir, 'live-claim'), String(process.ppid));
    await removeFreeClaims(dir);
    expect(await readdir(dir)).toEqual(['live-claim']);
    await writeFile(join(dir, 'live-claim'), String(deadPid()));
    await removeFreeClaims(dir);
    await expect(readdir(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    await removeFreeClaims(dir); // no directory: nothing to do
  });

  it('a claim is named by 32 hex digits of the address’s SHA-256, as every build names it (two builds at once claim the same file); the holder file is 0600', async () => {
    const { runsDir, ctx } = await rig();
    expect(basename(claimPath(runsDir, 'acct-1', 'a@x.io'))).toBe(
      'aa8a6b1226018606fb52fd4fb5e6f407',
    );
    const claims = addressClaims(ctx);
    const claim = await claims.take('a@x.io');
    const holder = join(claimsDir(runsDir, 'acct-1'), `holder-${process.pid}`);
    expect((await stat(holder)).mode & 0o777).toBe(0o600);
    if ('release' in claim) await claim.release();
  });

  it('a claim this run cannot read (a directory stands there) is waited for as a held one, said once, until the deadline; with no onWaiting too', async () => {
    const { runsDir, ctx, told } = await rig();
    const path = claimPath(runsDir, 'acct-1', 'a@x.io');
    await mkdir(path, { recursive: true });
    const deadline = Date.now() + 2 * CLAIM_POLL_MS;
    const got = await addressClaims({ ...ctx, now: Date.now, deadline }).take('a@x.io');
    expect(got).toEqual({ heldBy: `whoever holds ${path} (a claim this run cannot read)` });
    expect(told).toEqual([
      `waiting for whoever holds ${path} (a claim this run cannot read), which is verifying an address this list holds too: its answer is then taken from the results cache instead of being paid for twice`,
    ]);
    const { onWaiting: _none, ...quiet } = ctx;
    const again = addressClaims({
      ...quiet,
      now: Date.now,
      deadline: Date.now() + 2 * CLAIM_POLL_MS,
    });
    expect(await again.take('a@x.io')).toMatchObject({ heldBy: expect.any(String) });
  });

  it('a claim whose link names nothing to open (a dangling link) is looked at again until the deadline or an interrupt, never forever', async () => {
    const { runsDir, ctx } = await rig();
    const path = claimPath(runsDir, 'acct-1', 'a@x.io');
    await mkdir(claimsDir(runsDir, 'acct-1'), { recursive: true });
    await symlink(join(runsDir, 'nowhere'), path);
    const deadline = Date.now() + 60;
    const held = { heldBy: 'another enrich process replacing a claim left by one gone' };
    expect(await addressClaims({ ...ctx, now: Date.now, deadline }).take('a@x.io')).toEqual(held);
    const stop = new AbortController();
    stop.abort();
    expect(await addressClaims({ ...ctx, signal: stop.signal }).take('a@x.io')).toEqual(held);
  });

  it('a deadline one look away gives up at once, without waiting for that look', async () => {
    const { ctx, heldElsewhere } = await rig({ now: () => 0, deadline: CLAIM_POLL_MS });
    await heldElsewhere('a@x.io');
    expect(await addressClaims(ctx).take('a@x.io')).toEqual({
      heldBy: `another enrich process (pid ${process.ppid})`,
      details: { pid: process.ppid },
    });
    // A run in this process holds it: no pid to name.
    const mine = addressClaims({ ...ctx, deadline: 10_000 });
    const first = await mine.take('b@x.io');
    expect(await addressClaims(ctx).take('b@x.io')).toEqual({
      heldBy: 'another run in this process',
    });
    if ('release' in first) await first.release();
  });

  it('a release is harmless twice, and after the claims directory was removed; close leaves the holder file while another set of claims here holds one, and is harmless with none', async () => {
    const { runsDir, ctx } = await rig();
    const one = addressClaims(ctx);
    const two = addressClaims(ctx);
    const a = await one.take('a@x.io');
    if (!('release' in a)) throw new Error('not taken');
    await a.release();
    await a.release();
    const b = await two.take('b@x.io');
    if (!('release' in b)) throw new Error('not taken');
    await one.close();
    const holder = join(claimsDir(runsDir, 'acct-1'), `holder-${process.pid}`);
    expect((await stat(holder)).isFile()).toBe(true);
    await rm(claimsDir(runsDir, 'acct-1'), { recursive: true });
    await b.release();
    await two.close();
    const never = await rig();
    await addressClaims(never.ctx).close();
  });

  it('removeFreeClaims also removes what cannot be read: a dangling link, a directory', async () => {
    const { runsDir } = await rig();
    const dir = claimsDir(runsDir, 'acct-1');
    await mkdir(join(dir, 'a-directory', 'inside'), { recursive: true });
    await symlink(join(runsDir, 'nowhere'), join(dir, 'dangling'));
    await removeFreeClaims(dir);
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
