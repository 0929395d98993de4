import { EnrichError, ExitCode, exitCodeOfCode } from '../../errors.js';
import type { InputIdentity } from '../../io/read.js';
import { discardNewIfThrows, journalAccount, openJournal, runKey } from '../journal/journal.js';
import { startsAfresh } from '../journal/renew.js';
import { claimOutput, refuseOutputInUse } from '../journal/output-lock.js';
import { refuseRunOfChangedFile } from './running-now.js';
import { addressClaims, type AddressClaims } from './address-claims.js';
import { addressOfCell } from './address.js';
import { createFeed, type Feed } from './feed.js';
import { markLostByDeadRuns } from './lost-elsewhere.js';
import { createVerifyProgress, PROGRESS_EVERY_ROWS } from './progress.js';
import { createVerifyPool, type PoolStats, type VerifyPool } from './verify-pool.js';
import type { AddressEntry, VerifyDeps, VerifyRun, VerifySummary } from './types.js';
import { writeVerified, type WrittenStats } from './write-verified.js';

/** The kind a verification run's journal carries (and `enrich jobs` shows). */
export const VERIFY_KIND = 'verify-emails';

/**
 * Rows pass one may read ahead of the output before it waits to send more: the bound on
 * what is sent (and paid for) past a row the output still waits for, so that a reader of
 * stdout that went away is seen within a bounded amount of work (one slow answer at the
 * head holds up the output, not the requests behind it, up to here).
 */
export const AHEAD_ROWS = 1024;

type Progress = ReturnType<typeof createVerifyProgress>;

/**
 * Verifies every distinct address of a file and writes every row back with its verdict, in
 * two passes over the input that run together: pass one reads the rows and verifies each
 * new address as it is found (journaled, at most `concurrency` at once, at most AHEAD_ROWS
 * rows ahead of the output); pass two writes the output in input order, each row as soon
 * as its address is settled. A write that fails (a reader of stdout that went away) stops
 * the run: nothing more is sent, the requests in flight get their answer (journaled, kept),
 * and the write's error (OUTPUT_CLOSED) is thrown. The same run again resumes: answered
 * addresses are not sent again. Never prints.
 */
export async function runVerify(run: VerifyRun, deps: VerifyDeps): Promise<VerifySummary> {
  const now = deps.now ?? Date.now;
  const deadline = now() + run.timeoutMs;
  const input = await run.source.identity();
  const { key, header } = identityOf(run, deps, input);
  await refuseRunOfChangedFile({ runsDir: run.runsDir, key, ...header });
  const as = run.words.option('output');
  const writes = { runsDir: run.runsDir, key, target: run.output.target, command: run.command, as };
  await refuseOutputInUse(writes);
  const journal = await openVerifyJournal(run, deps, { key, header }, now);
  let progress: Progress | undefined;
  let release: (() => Promise<void>) | undefined;
  const lost = deadRunsOf(run, deps, key);
  const claims = claimsOf(run, deps, deadline, lost);
  try {
    // Two runs started at once both passed refuseOutputInUse: one takes the output's lock, the
    // other stops here, leaving no journal behind (its next run is a new run, not a resumed one).
    release = await discardNewIfThrows(journal, claimOutput({ ...writes, input: input.path }));
    await lost?.();
    // Ctrl-C stops the output with the requests: rows after it would only say "not sent".
    const feed = createFeed(() => pool.stopReason()?.code === 'INTERRUPTED');
    const table = new Map<string, AddressEntry>();
    const pool = createVerifyPool({
      api: deps.api,
      journal,
      cache: deps.cache,
      policy: run.cache,
      concurrency: run.concurrency,
      maxCredits: run.maxCredits,
      deadline,
      resendUnconfirmed: run.resendUnconfirmed,
      now,
      signal: deps.signal,
      words: run.words,
      claims,
      onSettled: () => {
        feed.notify();
        progress?.emit();
      },
    });
    progress = createVerifyProgress(run.source, deps.onProgress, () => ({
      rowsRead: feed.read(),
      rowsWritten: feed.written(),
      addresses: table.size,
      done: table.size - pool.unsettled(),
      sent: pool.stats.sent,
      creditsCharged: pool.stats.creditsCharged,
    }));
    const writing = writeVerified(run, table, feed);
    // A write that failed stops pass one; the failure is thrown once its requests are answered.
    writing.catch(feed.stop);
    const duplicates = await readAndVerify(run, pool, table, progress, feed).catch(
      async (err: unknown) => {
        feed.stop();
        // A read that failed (the file changed under the run, a malformed line): the requests
        // in flight get their answer, journaled and cached, so the next run does not pay again.
        await pool.drain().catch(() => undefined);
        await writing.catch(() => undefined);
        throw err;
      },
    );
    const stop = pool.stopReason();
    if (stop?.code === 'INTERRUPTED') {
      feed.stop();
      await writing.catch(() => undefined);
      throw new EnrichError('INTERRUPTED', `interrupted; ${run.words.resume} to resume`);
    }
    feed.notify();
    const written = await writing;
    progress.emit();
    const summary = summarize(pool.stats, written, table.size, duplicates, stop);
    if (summary.exitCode === ExitCode.ok)
      await journal.append({ t: 'done', output: run.output.target, exit: summary.exitCode });
    return { ...summary, runKey: key, journal: journal.path, resumed: journal.resumed };
  } finally {
    await progress?.close();
    await journal.close();
    await Promise.all([release?.(), claims?.close()]);
  }
}

/** Opens (or resumes) the run's journal; a finished run is not resumed under --refresh, nor once past the max age. */
function openVerifyJournal(
  run: VerifyRun,
  deps: VerifyDeps,
  id: ReturnType<typeof identityOf>,
  now: () => number,
) {
  return openJournal({
    runsDir: run.runsDir,
    ...id,
    restart: run.restart,
    now,
    renew: (found) =>
      startsAfresh(found, run.cache, { now: now(), cache: deps.cache !== undefined }),
  });
}

/** The run's journal key and header. Another account's run is another run: its answers are never this one's. */
export function identityOf(
  run: VerifyRun,
  deps: Pick<VerifyDeps, 'account'>,
  input: InputIdentity,
) {
  const options = deps.account
    ? { ...run.identity, account: journalAccount(deps.account) }
    : run.identity;
  const key = runKey(VERIFY_KIND, input, options);
  return { key, header: { kind: VERIFY_KIND, input, options, command: run.command } };
}

/**
 * Another list of the account being verified now: an address it is sending is waited for
 * (address-claims.ts), then taken from the cache, not paid for twice. A run that neither reads
 * nor fills the cache (--no-cache) stays out: no other run could take its answers, and it sends
 * every address anyway. A --refresh run takes part: the runs after it take its answers.
 */
function claimsOf(
  run: VerifyRun,
  deps: VerifyDeps,
  deadline: number,
  lost: (() => Promise<void>) | undefined,
): AddressClaims | undefined {
  if (!deps.cache || (!run.cache.read && !run.cache.write)) return undefined;
  // Once per process found dead holding a claim: what it sent then is journaled by now.
  const looked = new Map<number, Promise<void>>();
  return addressClaims({
    runsDir: run.runsDir,
    account: deps.account,
    deadline,
    now: deps.now ?? Date.now,
    signal: deps.signal,
    onWaiting: deps.onWaiting,
    ...(lost
      ? {
          onHolderDied: (pid: number) => {
            if (!looked.has(pid)) looked.set(pid, lost());
            return looked.get(pid)!;
          },
        }
      : {}),
  });
}

/**
 * Marks, as a run that lost their answers would have, the addresses other verification runs of
 * the account sent before they died with no answer (lost-elsewhere.ts): at the run's start, and
 * again when a claim is found held by a process gone. Undefined when the run writes no cache.
 */
function deadRunsOf(
  run: VerifyRun,
  deps: VerifyDeps,
  key: string,
): (() => Promise<void>) | undefined {
  const cache = deps.cache;
  if (!cache || !run.cache.write) return undefined;
  const c = { runsDir: run.runsDir, key, account: deps.account, kind: VERIFY_KIND };
  return () => markLostByDeadRuns(c, cache).catch(() => undefined);
}

/**
 * Pass one: finds each distinct address and hands it to the pool; returns the duplicate
 * rows. Stops reading once the run stopped (the output failed), then waits for the answers
 * of the requests in flight.
 */
async function readAndVerify(
  run: VerifyRun,
  pool: VerifyPool,
  table: Map<string, AddressEntry>,
  progress: Progress,
  feed: Feed,
): Promise<number> {
  let duplicates = 0;
  for await (const row of run.source.rows()) {
    if (feed.stopped()) break;
    const rows = feed.readRow();
    if (rows % PROGRESS_EVERY_ROWS === 0) progress.emit();
    const cell = row.error ? undefined : addressOfCell(row.cells[run.column]);
    if (cell?.kind !== 'address') continue;
    if (table.has(cell.address)) {
      duplicates++;
      continue;
    }
    while (rows - feed.written() > AHEAD_ROWS && !feed.stopped()) await feed.next();
    if (feed.stopped()) break;
    const entry: AddressEntry = { first: row.index };
    table.set(cell.address, entry);
    await pool.add(cell.address, entry);
    // The writer may be waiting for this row.
    feed.notify();
  }
  await pool.drain();
  progress.emit();
  return duplicates;
}

/** The summary's counts and exit code (DESIGN.md section 4) from the pool and the output. */
export function summarize(
  s: PoolStats,
  written: WrittenStats,
  addresses: number,
  duplicates: number,
  stop: { code: string; message: string } | undefined,
): Omit<VerifySummary, 'runKey' | 'journal' | 'resumed'> {
  const balance =
    s.before !== null && s.after !== null
      ? { before: s.before, after: s.after, drop: Math.max(0, s.before - s.after) }
      : null;
  return {
    rows: written.rows,
    statuses: written.statuses,
    verdicts: written.verdicts,
    notAnAddress: written.notAnAddress,
    noAddress: written.noAddress,
    malformed: written.malformed,
    addresses,
    duplicates,
    cacheHits: s.cacheHits,
    creditsSaved: s.creditsSaved,
    answeredEarlier: s.answeredEarlier,
    sent: s.sent,
    creditsCharged: s.creditsCharged,
    unconfirmed: s.unconfirmed,
    failed: s.failed,
    notSent: s.notSent,
    remainingCredits: s.after,
    balance,
    ...(stop ? { stopReason: stop } : {}),
    exitCode: exitCodeOf(s, written, stop),
  };
}

function exitCodeOf(
  s: PoolStats,
  written: WrittenStats,
  stop: { code: string } | undefined,
): number {
  const stopExit = stop && exitCodeOfCode(stop.code);
  if (stopExit === ExitCode.auth || stopExit === ExitCode.credits || stopExit === ExitCode.internal)
    return stopExit;
  // A service out of reach is exit 6 only when it answered nothing at all.
  if (stopExit === ExitCode.network && written.statuses.enriched === 0) return ExitCode.network;
  if (stop || s.unconfirmed > 0 || written.statuses.failed > 0) return ExitCode.partial;
  return ExitCode.ok;
}
