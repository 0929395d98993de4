import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { endsDone } from '../../journal-tail.js';
import { journalAccount, peekRun, runsMatching } from '../journal/journal.js';
import { runLockInUse } from '../journal/run-lock.js';
import { marked, markUnconfirmed } from '../run/cache-use.js';
import { OTHER_FILES_BUDGET_MS } from '../run/earlier-runs.js';
import type { ResultsCache } from '../types.js';

/**
 * The addresses other verification runs of the account sent and never saw answered because
 * they died with the request on the wire (SIGKILL, a crash, a power cut after the journal line
 * reached the disk): their journals say `vsend` and nothing after. That run's own resume would
 * not send them again by itself (they may have been charged); a run of another list holding
 * them must not either. A run that lived to see its request unanswered marked the address in
 * the results cache then (outcomes.ts); this finds the ones a dead run could not mark.
 */

/** What finding them needs. */
export interface LostElsewhereContext {
  runsDir: string;
  /** This run's key: never one of the others. */
  key: string;
  /** The key's account (`client.account`); undefined: an injected API, runs without one. */
  account: string | undefined;
  /** The kind of verification runs' journals (run-verify.ts VERIFY_KIND). */
  kind: string;
  /** How long reading the other runs' journals may take (the rest are left for the next start). */
  budgetMs?: number;
}

/**
 * The addresses (with when each was sent) that the verification runs of the account, other than
 * `key`, journaled sent and never answered, of runs no live process holds. Read without taking
 * their locks (a dry run takes none either): a run going on now is left out, its requests are
 * its own to settle, and an address it sends is claimed (address-claims.ts).
 */
export async function lostByDeadRuns(c: LostElsewhereContext): Promise<Map<string, number>> {
  const started = performance.now();
  const account = c.account === undefined ? undefined : journalAccount(c.account);
  const lost = new Map<string, number>();
  const runs = await runsMatching(
    c.runsDir,
    c.key,
    (h) => h.kind === c.kind && h.options.account === account,
  );
  for (const header of runs) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: past the budget the rest are left for the next start (a test would need a slow disk)
    if (performance.now() - started > (c.budgetMs ?? OTHER_FILES_BUDGET_MS)) break;
    // A run that finished with everything written (exit 0) left no address unanswered: its
    // journal, which may be long, is not read.
    if (await finished(join(c.runsDir, header.run, 'journal.jsonl'))) continue;
    const state = await peekRun(c.runsDir, header.run);
    const sent: [string, number][] = [];
    // Stryker disable next-line OptionalChaining,ArrayDeclaration: a journal whose header was just read folds to a state; one with no address yet adds none either way
    for (const [address, s] of state?.verify ?? [])
      if (s.state === 'sent') sent.push([address, s.at]);
    // Stryker disable next-line ConditionalExpression: a run that sent nothing unanswered adds nothing either way (this spares the look at its lock)
    if (sent.length === 0) continue;
    if (await runLockInUse(join(c.runsDir, header.run), header.command)) continue;
    // Sent by several: the latest send, from which the mark's max age counts.
    for (const [address, at] of sent) lost.set(address, Math.max(lost.get(address) ?? at, at));
  }
  return lost;
}

/** Whether a journal ends with its run's `done` (false when it cannot be read). */
const finished = (path: string): Promise<boolean> =>
  stat(path).then(
    (st) => endsDone(path, st.size),
    // Stryker disable next-line ArrowFunction,BooleanLiteral: a journal that cannot be looked at cannot be read either (peekRun): it adds nothing either way
    () => false,
  );

/**
 * Marks in the results cache the addresses dead runs of the account lost (lostByDeadRuns), where
 * the cache holds nothing for them yet: no run sends them again by itself. Resolves once the
 * marks are committed (read back by this run, and by other processes).
 */
export async function markLostByDeadRuns(
  c: LostElsewhereContext,
  cache: ResultsCache,
): Promise<void> {
  const lost = await lostByDeadRuns(c);
  for (const [address, at] of lost) markUnconfirmed(cache, [{ key: address }], at);
  // Read back at once (the address a claim was just taken for): a put is seen once committed.
  if (lost.size > 0) await cache.committed?.();
}

/**
 * The cache as a dry run reads it: the addresses dead runs lost read as marks (as the run would
 * mark them before it sends anything: cache-use.ts `marked`).
 */
export function withLostMarks(
  cache: ResultsCache,
  lost: ReadonlyMap<string, number>,
): ResultsCache {
  // Everything else as the cache has it (as withoutMarks, cache-use.ts).
  const view = Object.create(cache) as ResultsCache;
  view.get = (address) => {
    const found = cache.get(address);
    const at = lost.get(address);
    return (at !== undefined && marked(found, at)) || found;
  };
  return view;
}
