import { noRecords } from '../join/join.js';
import type { JoinSource } from '../join/write-joined.js';
import type { LeafResult, ResolvedRun, ResultsCache } from '../types.js';
import type { BatchContext } from './batch-context.js';
import { waitForRows, type ClaimsUse } from './classify-claimed.js';
import type { DriveClaims, ProgressSink } from './drive.js';
import type { FlightGate } from './flight-gate.js';
import { heldAtTimeout, waitingForRows } from './messages.js';
import {
  resendHeld,
  takeResent,
  type RefillClaims,
  type RefillRow,
  type Resent,
} from './refill.js';
import { rowClaims, type Holder, type RowClaims } from './row-claims.js';

/** Where the rows a run sends again go: their outcomes (`resent`), the join's source, the gate, the progress. */
export interface ResendTo {
  resent: Resent | undefined;
  store: JoinSource;
  gate: FlightGate;
  sink: ProgressSink;
  notSent: () => string;
}

/**
 * The row claims of a bulk run (row-claims.ts), when it reads and fills a results cache that
 * names its entries: none otherwise (a `--refresh` run sends its rows whoever else does; a
 * `--no-cache` one could take no other run's answer). `leaves`: those of the rows it sent again
 * after another run held them (for the summary); `close` once every batch has ended.
 */
export function runClaims(
  run: Pick<ResolvedRun, 'runsDir' | 'batchSize' | 'cache' | 'words'>,
  ctx: BatchContext,
  deps: {
    cache?: ResultsCache | undefined;
    onWarning?: ((message: string) => void) | undefined;
    /** The run's key (named in its claims file). */
    run: string;
    settleRuns: (runs: string[], deadline: number) => Promise<void>;
  },
  to: ResendTo,
):
  | {
      drive: DriveClaims;
      /** Claims the rows a resume sends again (refill.ts) like those of its batches. */
      refill: RefillClaims;
      leaves: LeafResult[];
      close: () => Promise<void>;
    }
  | undefined {
  const { cache, onWarning } = deps;
  const { resent } = to;
  const keyOf = cache?.claimKey?.bind(cache);
  if (!cache || !keyOf || !resent || !run.cache.read || !run.cache.write) return undefined;
  const claims = rowClaims({
    runsDir: run.runsDir,
    run: deps.run,
    now: ctx.env.now,
    signal: ctx.env.signal,
    onUnclaimed: (why) =>
      onWarning?.(
        `rows cannot be claimed in ${run.runsDir} (${why}): a row another enrich run sends at the same time may be paid for twice`,
      ),
  });
  const leaves: LeafResult[] = [];
  const { releaseAfter, drain } = releaser(cache, claims);
  // A run that does not wait for its results (--no-wait) does not wait for another's either,
  // nor for an ended holder's jobs: rows still held are left for the next run, which takes
  // them from the cache.
  const deadline = ctx.wait ? ctx.deadline : ctx.env.now();
  const drive: DriveClaims = {
    use: {
      claims,
      keyOf,
      deadline,
      now: ctx.env.now,
      settleRuns: (runs) => deps.settleRuns(runs, deadline),
      ...waitingSaid(to.sink, onWarning),
    },
    async resend(rows) {
      const done = resendHeld(run, ctx, rows, to);
      releaseAfter(
        done.then((d) => d.leaves),
        rows.map((r) => keyOf(r.item.key)),
      );
      const sent = await done;
      takeResent(resent, sent, to.sink.progress);
      leaves.push(...sent.leaves);
    },
    releaseAfter: (done, items) =>
      releaseAfter(
        done,
        items.map((i) => keyOf(i.key)),
      ),
  };
  const refill = refillClaims(claims, drive, {
    keyOf,
    answer: (request) => cache.get(request),
    resent,
    timeout: run.words.option('timeoutMs'),
  });
  return {
    drive,
    refill,
    leaves,
    async close() {
      await drain();
      await claims.close();
    },
  };
}

/** Says (once, on stderr) and in the progress line that the run waits for rows another run holds. */
function waitingSaid(
  sink: ProgressSink,
  onWarning: ((message: string) => void) | undefined,
): Pick<ClaimsUse, 'onWaiting' | 'onWaited'> {
  let said = false;
  return {
    onWaiting: (holder, rows) => {
      // A run that ended is not waited for: settling its jobs says so (earlier-runs.ts).
      if (!said && !holder.ended) onWarning?.(waitingForRows(holder.pid));
      said ||= !holder.ended;
      sink.progress.rowsHeldElsewhere = rows;
      sink.emit();
    },
    onWaited: () => {
      delete sink.progress.rowsHeldElsewhere;
      sink.emit();
    },
  };
}

type HeldRows = Map<string, { row: RefillRow; by: Holder }>;

/**
 * A resume's refill rows claimed as a first run's batches are (classify-claimed.ts): the rows of
 * refill batches an earlier attempt journaled whoever else holds them, the others only when no
 * other live run does (those it holds are waited for once this run's own are sent).
 */
function refillClaims(
  claims: RowClaims,
  drive: DriveClaims,
  o: {
    keyOf: (request: string) => string;
    /** The cached answer of a request (a refill row is an earlier attempt's cache hit: any age). */
    answer: ResultsCache['get'];
    resent: Resent;
    timeout: string;
  },
): RefillClaims {
  const keysOf = (rows: readonly RefillRow[]) => rows.map((r) => o.keyOf(r.item.key));
  return {
    async claim(listed, gone) {
      await claims.claim(keysOf(listed), true);
      const holders = await claims.claim(keysOf(gone));
      const send: RefillRow[] = [];
      const held: HeldRows = new Map();
      const late: string[] = [];
      for (const r of gone) {
        const key = o.keyOf(r.item.key);
        const by = holders.get(key);
        if (by) held.set(key, { row: r, by });
        // Answered since it was looked up (another run sent it, and gave it back): from the cache.
        else if (o.answer(r.item.key)) late.push(key);
        else send.push(r);
      }
      if (late.length > 0) await claims.release(late);
      return { send, held };
    },
    releaseAfter: (done, rows) =>
      drive.releaseAfter(
        done,
        rows.map((r) => r.item),
      ),
    async wait(held) {
      const left = await waitForRows(held, drive.use, o.answer, (rows) => drive.resend(rows));
      for (const { row, by } of left) {
        // Not sent: failed, saying who held it; the next run takes its answer from the cache.
        o.resent.outcomes.set(
          row.item.key,
          noRecords('failed', heldAtTimeout(by.pid, o.timeout, by.ended)),
        );
        (o.resent.held ??= new Set()).add(row.item.key);
      }
    },
  };
}

/**
 * Gives claims back once their batch ended and its answers are committed to the cache, where
 * the run waiting for them looks. Those of a job still running stay claimed until the run ends:
 * the run waiting for them then downloads that job (settleRuns) rather than paying again.
 * `drain` waits for the releases under way.
 */
function releaser(cache: ResultsCache, claims: RowClaims) {
  const releases = new Set<Promise<void>>();
  return {
    releaseAfter(done: Promise<readonly LeafResult[]>, keys: readonly string[]): void {
      const p = done
        .catch(() => [])
        .then(async (leaves) => {
          if (leaves.some((l) => l.state === 'pending')) return;
          await cache.committed?.();
          await claims.release(keys);
        })
        .catch(() => undefined)
        .finally(() => releases.delete(p));
      releases.add(p);
    },
    async drain(): Promise<void> {
      while (releases.size > 0) await Promise.allSettled([...releases]);
    },
  };
}
