import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EnrichError } from '../../errors.js';
import { journalAccount } from '../journal/journal.js';
import { acquireLockDir, lockHolder } from '../journal/run-lock.js';

/**
 * One request per address at a time across the verification runs of an account (per state
 * directory). Two runs of different lists at once (a copy of a list that grew, a cron job beside
 * a run by hand) would otherwise both send, and pay for, the addresses the lists share: neither
 * sees the other's answer before it has sent its own. Before it sends an address, a run claims
 * it; a run that finds the address claimed by another waits for that request to end, then takes
 * its answer from the results cache (written before the claim is given back). An address no
 * other run is sending is sent at once, so lists that share nothing never wait for each other.
 *
 * A claim is a lock (run-lock.ts: exactly one holder, a holder that died is taken over, a reused
 * pid told apart on Linux) in a directory named for the address's hash under the runs directory,
 * which exists only while the address is in flight; the listing of runs passes over it. A run
 * that neither reads nor fills the cache (`--no-cache`) claims nothing: no run could take its
 * answers.
 */

/** How often a waiting run looks at a claim again. */
export const CLAIM_POLL_MS = 100;

export interface ClaimContext {
  runsDir: string;
  /** The key's account (undefined: an injected API, one set of claims for all). */
  account: string | undefined;
  command: string;
  /** When the run's time is up (epoch ms): an address still claimed by another then is not sent. */
  deadline: number;
  now: () => number;
  signal?: AbortSignal | undefined;
  /** Told once, when the run first waits for another run's request. */
  onWaiting?: ((text: string) => void) | undefined;
}

/** A claim taken (`release` gives it back), or who still held it when the run's time was up. */
export type Claim =
  { release: () => Promise<void>; waited: boolean } | { heldBy: string; details?: { pid: number } };

/** The directory of an account's claims. */
export function claimsDir(runsDir: string, account: string | undefined): string {
  return join(runsDir, `.verify-claims-${account === undefined ? 'any' : journalAccount(account)}`);
}

/** The directory of the claim of one address (as the run keys it). */
export function claimDir(runsDir: string, account: string | undefined, address: string): string {
  const id = createHash('sha256').update(address).digest('hex').slice(0, 32);
  return join(claimsDir(runsDir, account), id);
}

/** Claims addresses for one run: `take` waits while another run sends the address. */
export function addressClaims(c: ClaimContext) {
  let told = false;
  return {
    async take(address: string): Promise<Claim> {
      const dir = claimDir(c.runsDir, c.account, address);
      for (let waited = false; ; waited = true) {
        let held: EnrichError;
        try {
          return { release: await acquireLockDir(dir, c.command), waited };
        } catch (err) {
          // A claim that cannot be made (a runs directory not ours to write, a full disk): sent
          // unclaimed, as by a run of an earlier build; its journal says the rest.
          if (!(err instanceof EnrichError) || err.code !== 'RUN_IN_PROGRESS')
            return { release: async () => undefined, waited };
          held = err;
        }
        const { who, details } = lockHolder(held);
        if (c.signal?.aborted || c.now() + CLAIM_POLL_MS >= c.deadline)
          return { heldBy: who, ...(details ? { details } : {}) };
        if (!told) {
          told = true;
          c.onWaiting?.(
            `waiting for ${who}, which is verifying an address this list holds too: its answer is then taken from the results cache instead of being paid for twice`,
          );
        }
        await delay(CLAIM_POLL_MS, undefined, { signal: c.signal }).catch(() => undefined);
      }
    },
  };
}

export type AddressClaims = ReturnType<typeof addressClaims>;
