import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EnrichError } from '../../errors.js';
import { journalAccount } from '../journal/journal.js';
import { acquireRunLock, lockHolder } from '../journal/run-lock.js';

/**
 * One verification run of an account sends at a time (per state directory). Two runs of
 * different lists at once (a copy of a list that grew, a cron job and a run by hand) would
 * otherwise both send, and pay for, every address the lists share: neither sees the other's
 * answers before it has sent its own. A run that finds another one sending waits for it to end,
 * then takes the addresses that run verified from the results cache. The same list twice is
 * refused before this (the run's own lock); a run that neither reads nor fills the cache
 * (`--no-cache`) does not take part.
 *
 * The turn is a lock (run-lock.ts: exactly one holder, a holder that died is taken over, a
 * reused pid told apart on Linux) in a directory of its own under the runs directory, which the
 * listing of runs passes over (no journal). Beside it, `holder.json` names the holder's list for
 * the message of whoever waits.
 */

/** How often a waiting run looks at the turn again. */
export const TURN_POLL_MS = 250;

export interface TurnContext {
  runsDir: string;
  /** The key's account (undefined: an injected API, one turn for all). */
  account: string | undefined;
  /** The list this run verifies, and the command that runs it again. */
  input: string;
  command: string;
  /** How the run is resumed (the INTERRUPTED message). */
  resume: string;
  /** When the run's time is up (epoch ms): a turn not had by then stops it; and its option's name. */
  deadline: number;
  timeoutOption: string;
  now: () => number;
  signal?: AbortSignal | undefined;
  /** Told once, when the run starts waiting (what it waits for). */
  onWaiting?: ((text: string) => void) | undefined;
}

interface HolderNote {
  pid: number;
  input: string;
}

/** The directory of an account's turn. */
export function turnDir(runsDir: string, account: string | undefined): string {
  return join(runsDir, `.verify-turn-${account === undefined ? 'any' : journalAccount(account)}`);
}

/** Waits for the account's turn to send; resolves with its release. */
export async function takeSendingTurn(c: TurnContext): Promise<() => Promise<void>> {
  const dir = turnDir(c.runsDir, c.account);
  const note = join(dir, 'holder.json');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let told = false;
  for (;;) {
    try {
      const release = await acquireRunLock(dir, c.command);
      const mine: HolderNote = { pid: process.pid, input: c.input };
      await writeFile(note, JSON.stringify(mine), { mode: 0o600 });
      return async () => {
        await rm(note, { force: true });
        await release();
      };
    } catch (err) {
      if (!(err instanceof EnrichError) || err.code !== 'RUN_IN_PROGRESS') throw err;
      const other = await holderOf(note);
      if (c.signal?.aborted)
        throw new EnrichError('INTERRUPTED', `interrupted; ${c.resume} to resume`);
      if (c.now() + TURN_POLL_MS >= c.deadline) throw stillSending(c, err, other);
      if (!told) {
        told = true;
        c.onWaiting?.(
          `waiting for ${whoSends(err, other)} to finish: addresses both lists hold are then taken from the results cache instead of being paid for twice`,
        );
      }
      await delay(TURN_POLL_MS, undefined, { signal: c.signal }).catch(() => undefined);
    }
  }
}

async function holderOf(note: string): Promise<HolderNote | undefined> {
  try {
    const parsed = JSON.parse(await readFile(note, 'utf8')) as Partial<HolderNote>;
    return typeof parsed.input === 'string' && typeof parsed.pid === 'number'
      ? { pid: parsed.pid, input: parsed.input }
      : undefined;
  } catch {
    return undefined; // not written yet, or its holder just ended
  }
}

/** "another enrich process (pid 12, verifying today.csv)": the holder as its lock and note tell. */
function whoSends(err: EnrichError, other: HolderNote | undefined): string {
  const pid = err.details?.pid;
  // A note left by a holder that died, before the one that took its lock over wrote its own: not named.
  const same = other?.pid === (typeof pid === 'number' ? pid : process.pid);
  const what = other && same ? `verifying ${other.input}` : undefined;
  if (typeof pid === 'number')
    return `another enrich process (${[`pid ${pid}`, what].filter(Boolean).join(', ')})`;
  return what ? `another run in this process (${what})` : 'another run in this process';
}

function stillSending(c: TurnContext, err: EnrichError, other: HolderNote | undefined) {
  const { details } = lockHolder(err);
  return new EnrichError(
    'RUN_IN_PROGRESS',
    `${whoSends(err, other)} was still verifying addresses of this account when this run's time was up (${c.timeoutOption}): nothing was sent, so no address both lists hold is paid for twice`,
    {
      cause: err,
      ...(details ? { details } : {}),
      hint: `wait for it to finish, then run again (the addresses it verified come from the results cache): ${c.command}`,
    },
  );
}
