import type { InputRow, InputSource } from '../../io/read.js';
import type { LeafResult } from '../types.js';
import { noRecords, type RowOutcome } from './join.js';
import type { JoinStats, JoinWriter } from './join-writer.js';
import type { InvalidRow } from '../mapping/validate.js';
import { duplicateOutcome, leafJoiner, writeJoinedFrom, type JoinSource } from './write-joined.js';

type AnyRecord = Record<string, unknown>;

/**
 * The one-pass join. Rows the first pass has read wait in a bounded window, in
 * order; as soon as the batch of the row at the head of the window has its
 * results, rows are written, with the records still in memory. A fast service
 * thus costs one read of the input and one parse of each result.
 *
 * When the window is full while its head still waits for a job (a slow service),
 * or a duplicate row's first occurrence is already written and no longer held,
 * the window is dropped ("spilled"): the rows from the first one not yet written
 * are joined by a second pass over the input once every job is done
 * (writeJoinedFrom), exactly as if no row had been written early.
 */
export interface StreamJoin {
  /** Pass 1 hands over an invalid row. */
  invalid(row: InputRow, v: InvalidRow): void;
  /** Pass 1 hands over a row to send, in batch `batch` (-1: never sent, e.g. past --max-credits). */
  sent(row: InputRow, batch: number): void;
  /** Pass 1 hands over a duplicate of row `rep`. */
  duplicate(row: InputRow, rep: number): void;
  /** True when pass 1 should wait (`room()`) before handing over more rows. */
  full(): boolean;
  /** Resolves once the window has room again (or was spilled). */
  room(): Promise<void>;
  /** The leaves of batch `batch` are final (its rows can be written). */
  batchDone(batch: number, leaves: LeafResult[]): void;
  /** Records just downloaded and spooled: kept for the join rather than read back. */
  spooled(spoolId: string, records: AnyRecord[]): void;
  /** After every job: writes what is left (second pass from the first unwritten row if spilled) and closes. */
  finish(final: {
    leaves: LeafResult[];
    dupCounts: Map<number, number>;
    notSent: string;
  }): Promise<JoinStats & { secondPassFrom: number | null }>;
  /** True once the window was dropped (rows from then on are joined by the second pass). */
  readonly spilled: boolean;
}

/** One row waiting in the window: 0 invalid, 1 sent (batch), 2 duplicate (of `ref`). */
interface Pending {
  row: InputRow;
  kind: 0 | 1 | 2;
  ref: number;
  invalid?: InvalidRow;
}

export interface StreamJoinOptions {
  /** Rows the window holds at most before it spills. */
  windowRows: number;
  /** Outcomes of written rows kept for duplicates still to come. */
  keepOutcomes: number;
  /**
   * How long pass 1 waits, the window full, for the job of the row at its head before
   * it spills (a fast service answers in well under a second; a slow one is not waited for).
   */
  headWaitMs?: number;
}

export function createStreamJoin(
  s: JoinSource & { source: InputSource },
  out: JoinWriter,
  opts: StreamJoinOptions,
): StreamJoin {
  let window: Pending[] = [];
  let head = 0;
  let written = 0; // rows written so far = the index of the next row to write
  let spillAsked = false;
  let spilled = false;
  let fromRow = 0;
  let finished: { notSent: string } | undefined;
  let failure: unknown;
  let pumping: Promise<void> | undefined;
  let wakeRoom: (() => void) | undefined;

  const batches = new Map<number, LeafResult[]>();
  const fresh = new Map<string, AnyRecord[]>();
  let joinLeaf = leafJoiner(s, fresh);
  let lookupBatch = -1;
  // Outcomes of the last rows written (for duplicates yet to be read), and of rows
  // whose duplicates are in the window (until those are written).
  const recent = new Map<number, RowOutcome<AnyRecord>>();
  const held = new Map<number, { outcome?: RowOutcome<AnyRecord>; left: number }>();

  const resolvable = (p: Pending) =>
    p.kind !== 1 || (p.ref >= 0 ? batches.has(p.ref) : finished !== undefined);

  const doSpill = () => {
    spilled = true;
    fromRow = written;
    window = [];
    head = 0;
    batches.clear();
    fresh.clear();
    recent.clear();
    held.clear();
    joinLeaf = leafJoiner(s, fresh); // drops the lookup it held
  };

  const outcomeOfSent = async (p: Pending): Promise<RowOutcome<AnyRecord>> => {
    if (p.ref < 0) return noRecords('failed', finished?.notSent ?? 'not sent');
    if (p.ref !== lookupBatch) {
      batches.delete(lookupBatch);
      lookupBatch = p.ref;
    }
    const index = p.row.index;
    const leaf = batches.get(p.ref)?.find((l) => l.first <= index && index <= l.last);
    return joinLeaf(leaf, p.row, finished?.notSent ?? 'not sent');
  };

  const writeOne = async (p: Pending) => {
    if (p.kind === 0) return out.writeInvalid(p.row, p.invalid as InvalidRow);
    if (p.kind === 1) {
      const outcome = await outcomeOfSent(p);
      // Only duplicates read later ask for an outcome already written.
      if (s.dedupe) {
        recent.set(p.row.index, outcome);
        if (recent.size > opts.keepOutcomes) recent.delete(recent.keys().next().value as number);
      }
      const h = held.get(p.row.index);
      if (h) h.outcome = outcome;
      return out.write(p.row, outcome);
    }
    const h = held.get(p.ref) as { outcome: RowOutcome<AnyRecord>; left: number };
    if (--h.left === 0) held.delete(p.ref);
    return out.write(p.row, duplicateOutcome(h.outcome));
  };

  const pump = async () => {
    while (!spilled) {
      if (spillAsked) {
        doSpill();
        break;
      }
      const p = window[head];
      if (!p || !resolvable(p)) break;
      await writeOne(p);
      window[head++] = undefined as unknown as Pending;
      written++;
      if (head > 4096 && head * 2 > window.length) {
        window = window.slice(head);
        head = 0;
      }
    }
  };

  const kick = () => {
    if (pumping || spilled || failure !== undefined) return;
    pumping = pump()
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => {
        pumping = undefined;
        // A row handed over while the pump was on its way out must not wait for the next event.
        const p = window[head];
        if (failure === undefined && p && resolvable(p)) kick();
      });
  };

  const spill = () => {
    spillAsked = true;
    if (pumping) return; // the pump spills between two rows
    if (!spilled) doSpill();
  };

  /** Waits until a batch is done (true) or `ms` pass (false). */
  const headWithin = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        wakeRoom = undefined;
        resolve(false);
      }, ms);
      wakeRoom = () => {
        clearTimeout(timer);
        wakeRoom = undefined;
        resolve(true);
      };
    });

  const add = (p: Pending) => {
    if (failure !== undefined) throw failure;
    if (spillAsked) return;
    window.push(p);
    if (window.length - head === 1) kick();
  };

  return {
    get spilled() {
      return spillAsked;
    },
    invalid(row, v) {
      add({ row, kind: 0, ref: -1, invalid: v });
    },
    sent(row, batch) {
      add({ row, kind: 1, ref: batch });
    },
    duplicate(row, rep) {
      if (spillAsked) return;
      const h = held.get(rep);
      const outcome = recent.get(rep);
      if (h) h.left++;
      else if (outcome) held.set(rep, { outcome, left: 1 });
      // Not written yet (or being written): its outcome is kept for this row when it is.
      else if (rep >= written) held.set(rep, { left: 1 });
      // The first occurrence is written and forgotten: this row needs the second pass.
      else return spill();
      add({ row, kind: 2, ref: rep });
    },
    full() {
      return !spillAsked && window.length - head > opts.windowRows;
    },
    async room() {
      for (;;) {
        if (failure !== undefined) throw failure;
        if (spillAsked || window.length - head <= opts.windowRows) return;
        const p = window[head] as Pending;
        if (!resolvable(p)) {
          // A row never sent (past --max-credits) is only written at the end: no use waiting.
          if (p.kind === 1 && p.ref < 0) return spill();
          // A service that keeps pass 1 waiting this long is slow: stop holding rows.
          if (!(await headWithin(opts.headWaitMs ?? 0))) return spill();
          continue;
        }
        kick();
        await pumping;
      }
    },
    batchDone(batch, leaves) {
      if (spillAsked) return;
      batches.set(batch, leaves);
      kick();
      wakeRoom?.();
    },
    spooled(spoolId, records) {
      if (!spillAsked) fresh.set(spoolId, records);
    },
    async finish(final) {
      finished = { notSent: final.notSent };
      kick();
      while (pumping) await pumping;
      if (failure !== undefined) throw failure;
      // Every batch is final now: a row left in the window means it was spilled meanwhile.
      if (!spilled && window.length - head > 0) doSpill();
      if (spilled) {
        await writeJoinedFrom(
          { ...s, leaves: final.leaves, dupCounts: final.dupCounts, notSent: final.notSent },
          out,
          fromRow,
        );
      }
      return { ...(await out.close()), secondPassFrom: spilled ? fromRow : null };
    },
  };
}
