import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addressClaims,
  claimPath,
  claimsDir,
  CLAIM_POLL_MS,
  type ClaimContext,
} from '../../src/pipeline/verify/address-claims.js';
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

  it('a claim left by a process that died is taken over; one freed while waited for is taken then', async () => {
    const { ctx, heldElsewhere } = await rig();
    await heldElsewhere('a@x.io', deadPid());
    expect(await addressClaims(ctx).take('a@x.io')).toMatchObject({ waited: false });
    const free = await heldElsewhere('b@x.io');
    const taking = addressClaims(ctx).take('b@x.io');
    await new Promise((r) => setTimeout(r, CLAIM_POLL_MS / 2));
    await free();
    expect(await taking).toMatchObject({ waited: true });
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
});
