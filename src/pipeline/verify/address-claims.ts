import { createHash } from 'node:crypto';
import { link, mkdir, open, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { journalAccount } from '../journal/journal.js';
import { identityOf } from '../journal/run-lock.js';
import { processAlive } from '../../process-alive.js';

/**
 * One request per address at a time across the verification runs of an account (per state
 * directory). Two runs of different lists at once (a copy of a list that grew, a cron job beside
 * a run by hand) would otherwise both send, and pay for, the addresses the lists share: neither
 * sees the other's answer before it has sent its own. Before it sends an address, a run claims
 * it; a run that finds the address claimed by another waits for that request to end, then takes
 * its answer from the results cache (committed before the claim is given back). An address no
 * other run is sending is sent at once, so lists that share nothing never wait for each other.
 *
 * A claim is a hard link, named for the address's hash, to a file that names its process (pid,
 * and on Linux the boot and start time that tell a reused pid apart) and is written once per
 * process: one `link` to claim (exclusive: it fails when the name exists), one `unlink` to give it
 * back. A claim whose process is gone is replaced in one rename by the one contender that first
 * marks it (`<claim>.stale-<inode>`), as a stale run lock is (run-lock.ts). The claims live in a
 * directory of the account under the runs directory, which the listing of runs passes over. A
 * run that neither reads nor fills the cache (`--no-cache`) claims nothing: no run could take
 * its answers.
 */

/** How often a waiting run looks at a claim again. */
export const CLAIM_POLL_MS = 100;

export interface ClaimContext {
  runsDir: string;
  /** The key's account (undefined: an injected API, one set of claims for all). */
  account: string | undefined;
  /** When the run's time is up (epoch ms): an address still claimed by another then is not sent. */
  deadline: number;
  now: () => number;
  signal?: AbortSignal | undefined;
  /** Told once, when the run first waits for another run's request. */
  onWaiting?: ((text: string) => void) | undefined;
  /**
   * Awaited when a claim is taken over from a process that died holding it (`pid`), before the
   * claim is handed out: the run looks for what that process sent with no answer.
   */
  onHolderDied?: ((pid: number) => Promise<void>) | undefined;
}

/** A claim taken (`release` gives it back), or who still held it when the run's time was up. */
export type Claim =
  { release: () => Promise<void>; waited: boolean } | { heldBy: string; details?: { pid: number } };

/** The directory of an account's claims. */
export function claimsDir(runsDir: string, account: string | undefined): string {
  return join(runsDir, `.verify-claims-${account === undefined ? 'any' : journalAccount(account)}`);
}

/** The claim of one address (as the run keys it). */
export function claimPath(runsDir: string, account: string | undefined, address: string): string {
  const id = createHash('sha256').update(address).digest('hex').slice(0, 32);
  return join(claimsDir(runsDir, account), id);
}

/** The file every claim of this process links to: `holder-<pid>`, naming the process. */
const holderName = (pid: number) => `holder-${pid}`;

/** Claims this process holds, by path: another run in this process waits for them. */
const heldHere = new Set<string>();

const noRelease = async () => undefined;

/** A claim file as read: the pid and identity it names, and its inode. */
interface Seen {
  pid: number;
  identity: string | undefined;
  ino: bigint;
}

/**
 * The claim at `path` as read: undefined when it is not there (given back meanwhile),
 * `unreadable` when it cannot be read (another user's file, a directory: who holds it is unknown).
 */
async function readClaim(path: string): Promise<Seen | undefined | 'unreadable'> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : 'unreadable';
  }
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: an inode past 2^53 alone tells a bigint from a number
    const { ino } = await fh.stat({ bigint: true });
    const [pid, identity] = (await fh.readFile('utf8')).split('\n');
    return { pid: Number(pid), identity: identity || undefined, ino };
  } catch {
    return 'unreadable';
    // Stryker disable next-line BlockStatement: a read-only handle left to the garbage collector is not observable
  } finally {
    await fh.close();
  }
}

/** A claim read whose process is known to be gone (not one that cannot be read). */
const gone = (seen: Seen | undefined | 'unreadable'): seen is Seen =>
  typeof seen === 'object' && !live(seen);

/** Whether the process a claim names still runs (the same process, when its identity is known). */
function live(seen: Seen): boolean {
  if (!Number.isSafeInteger(seen.pid) || seen.pid <= 0 || !processAlive(seen.pid)) return false;
  return seen.identity === undefined || identityOf(seen.pid) === seen.identity;
}

/** This process's holder file in `root`, and the exclusive link of a claim to it. */
function holderIn(root: string) {
  const holder = join(root, holderName(process.pid));
  let ready: Promise<boolean> | undefined;
  // The directory and the holder file, made once (again if removed meanwhile).
  const prepare = (): Promise<boolean> =>
    (ready ??= (async () => {
      await mkdir(root, { recursive: true, mode: 0o700 });
      // Stryker disable next-line StringLiteral: /proc tells every process's identity on Linux, where the tests run
      const identity = identityOf(process.pid) ?? '';
      await writeFile(holder, `${process.pid}\n${identity}`, { mode: 0o600 });
      return true;
      // Stryker disable next-line BooleanLiteral,ArrowFunction: a holder file not made fails the link that follows the same way ('unclaimed')
    })().catch(() => false));
  /** Links a claim at `path`: true when taken, false when the name exists. */
  const linkAt = async (path: string): Promise<boolean | 'unclaimed'> => {
    // Stryker disable next-line EqualityOperator,UpdateOperator: a directory removed again between each of three tries would take racing the file system
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!(await prepare())) return 'unclaimed';
      try {
        await link(holder, path);
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') return false;
        if (code !== 'ENOENT') return 'unclaimed';
        ready = undefined; // the directory or the holder file was removed: made again
      }
    }
    // Stryker disable next-line StringLiteral: (likewise)
    return 'unclaimed';
  };
  return { holder, linkAt };
}

/** Replaces the stale claim `seen` at `path` by ours; false when another did it first. */
async function replaceStale(
  linkAt: (path: string) => Promise<boolean | 'unclaimed'>,
  path: string,
  seen: Seen,
): Promise<boolean> {
  const mark = `${path}.stale-${seen.ino}`;
  if ((await linkAt(mark)) !== true) {
    // Another contender marks it now; one that died marking it leaves its mark: removed.
    const other = await readClaim(mark);
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the mark was just read: it is there
    if (gone(other)) await rm(mark, { force: true });
    return false;
  }
  const now = await readClaim(path);
  // Stryker disable next-line all: a claim replaced by another contender between two reads: a test would need to race it
  if (typeof now !== 'object' || now.ino !== seen.ino) {
    // Stryker disable next-line all: (likewise)
    await rm(mark, { force: true });
    // Stryker disable next-line all: (likewise)
    return false;
  }
  await rename(mark, path);
  return true;
}

/** Claims addresses for one run: `take` waits while another run sends the address. */
export function addressClaims(c: ClaimContext) {
  const { holder, linkAt } = holderIn(claimsDir(c.runsDir, c.account));
  let told = false;

  const taken = (path: string, waited: boolean): Claim => ({
    waited,
    release: async () => {
      // Removed before this process lets another of its runs claim it, so never theirs.
      await rm(path, { force: true });
      heldHere.delete(path);
    },
  });

  /** Who holds `path` when this run may not take it now; undefined once taken (`claim`). */
  const attempt = async (
    path: string,
    waited: boolean,
  ): Promise<{ claim: Claim } | { who: string; pid?: number } | 'again'> => {
    if (heldHere.has(path)) return { who: 'another run in this process' };
    heldHere.add(path); // marked first: no other run of this process claims it meanwhile
    const linked = await linkAt(path);
    // Stryker disable next-line ConditionalExpression: the link names this process: read back below, it is taken the same way
    if (linked === true) return { claim: taken(path, waited) };
    // A claim that cannot be made (a runs directory not ours to write, a full disk): sent
    // unclaimed, as by a run of an earlier build; its journal says the rest.
    if (linked === 'unclaimed') {
      heldHere.delete(path);
      return { claim: { release: noRelease, waited } };
    }
    const seen = await readClaim(path);
    // Ours though no run here holds it: a release cut short (its unlink failed). Taken again.
    if (typeof seen === 'object' && seen.pid === process.pid) return { claim: taken(path, waited) };
    if (gone(seen) && (await replaceStale(linkAt, path, seen))) {
      await c.onHolderDied?.(seen.pid);
      return { claim: taken(path, waited) };
    }
    heldHere.delete(path);
    // Held by whoever could write it: waited for as a live claim, until the deadline.
    if (seen === 'unreadable')
      return { who: `whoever holds ${path} (a claim this run cannot read)` };
    if (seen === undefined || !live(seen)) return 'again'; // given back, or stale: looked at again
    return { who: `another enrich process (pid ${seen.pid})`, pid: seen.pid };
  };

  return {
    async take(address: string): Promise<Claim> {
      const path = claimPath(c.runsDir, c.account, address);
      for (let waited = false; ;) {
        const got = await attempt(path, waited);
        if (got === 'again') {
          // Another contender replaces a stale claim now (or a link names nothing it can open).
          if (c.signal?.aborted || c.now() >= c.deadline)
            return { heldBy: 'another enrich process replacing a claim left by one gone' };
          await delay(5);
          continue;
        }
        if ('claim' in got) return got.claim;
        const { who, pid } = got;
        if (c.signal?.aborted || c.now() + CLAIM_POLL_MS >= c.deadline)
          return { heldBy: who, ...(pid === undefined ? {} : { details: { pid } }) };
        if (!told) {
          told = true;
          c.onWaiting?.(
            `waiting for ${who}, which is verifying an address this list holds too: its answer is then taken from the results cache instead of being paid for twice`,
          );
        }
        waited = true;
        // Stryker disable next-line ObjectLiteral: an interrupt is seen at the next look either way (CLAIM_POLL_MS later at most)
        await delay(CLAIM_POLL_MS, undefined, { signal: c.signal }).catch(() => undefined);
      }
    },
    /** Removes this process's holder file once no run of it holds a claim (at the run's end). */
    async close(): Promise<void> {
      if (heldHere.size === 0) await rm(holder, { force: true });
    },
  };
}

export type AddressClaims = ReturnType<typeof addressClaims>;

/**
 * Removes the claims, marks and holder files in an account's claims directory whose process is
 * gone (left by runs that were killed: a claim is named for a hash of an address, contact data
 * too), then the directory once empty. Those of runs going on now stay.
 */
export async function removeFreeClaims(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const path = join(root, name);
    const seen = await readClaim(path);
    if (typeof seen === 'object' && live(seen)) continue;
    // Stryker disable next-line BooleanLiteral: `force`: a file another process removes between the listing and here (a race)
    await rm(path, { force: true, recursive: true });
  }
  await rmdir(root).catch(() => undefined);
}
