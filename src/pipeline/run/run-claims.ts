import type { JoinSource } from '../join/write-joined.js';
import type { LeafResult, ResolvedRun, ResultsCache } from '../types.js';
import type { BatchContext } from './batch-context.js';
import type { DriveClaims, ProgressSink } from './drive.js';
import type { FlightGate } from './flight-gate.js';
import { waitingForRows } from './messages.js';
import { resendHeld, takeResent, type Resent } from './refill.js';
import { rowClaims, type RowClaims } from './row-claims.js';

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
  run: Pick<ResolvedRun, 'runsDir' | 'batchSize' | 'cache'>,
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
  let saidWaiting = false;
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
      onWaiting: (holder, rows) => {
        if (!saidWaiting) onWarning?.(waitingForRows(holder.pid));
        saidWaiting = true;
        to.sink.progress.rowsHeldElsewhere = rows;
        to.sink.emit();
      },
      onWaited: () => {
        delete to.sink.progress.rowsHeldElsewhere;
        to.sink.emit();
      },
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
  return {
    drive,
    leaves,
    async close() {
      await drain();
      await claims.close();
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
