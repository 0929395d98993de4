import type { InputRow, InputSource } from '../../io/read.js';
import type { LeafResult } from '../types.js';
import { noRecords, type RowOutcome } from './join.js';
import type { JoinStats, JoinWriter } from './join-writer.js';
import type { InvalidRow } from '../mapping/validate.js';
import {
  duplicateOutcome,
  leafHolding,
  leafJoiner,
  writeJoinedFrom,
  type JoinSource,
} from './write-joined.js';
import { trailJoin, type TrailFeed } from './trail.js';

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
 * are joined by a second pass over the input that trails the jobs (trail.ts), each
 * row written as soon as its batch ends, exactly as if no row had been written early.
 * A duplicate of a row written long before gets that row's outcome from its batch
 * again; past a bound on such reads, a last pass after every job (writeJoinedFrom)
 * writes the rest.
 */
export interface StreamJoin {
  /** Pass 1 hands over an invalid row. */
  invalid(row: InputRow, v: InvalidRow): void;
  /** Pass 1 hands over a row to send, in batch `batch` (-1: never sent, e.g. past --max-credits). */
  sent(row: InputRow, batch: number): void;
  /** Pass 1 hands over a row answered from the results cache, with its outcome. */
  cached(row: InputRow, outcome: RowOutcome<AnyRecord>): void;
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
  /** The run stopped (it fails with its own error): a second pass waiting for jobs gives up. */
  cancel(): void;
  /** True once the window was dropped (rows from then on are joined by the second pass). */
  readonly spilled: boolean;
}

/** One row waiting in the window: 0 invalid, 1 sent (batch), 2 duplicate (of `ref`), 3 from the cache. */
interface Pending {
  row: InputRow;
  kind: 0 | 1 | 2 | 3;
  ref: number;
  invalid?: InvalidRow;
  outcome?: RowOutcome<AnyRecord>;
}

export interface StreamJoinOptions {
  /** Rows the window holds at most before it spills (a function: it follows the jobs in flight). */
  windowRows: number | (() => number);
  /** Outcomes of written rows kept for duplicates still to come. */
  keepOutcomes: number;
  /**
   * Rows of finished batches the trailing pass may read back for duplicates read long after
   * their first copy, beyond the rows it wrote (default 16 × keepOutcomes; see trail.ts).
   */
  farReadRows?: number;
  /**
   * How long pass 1 waits, the window full, for the job of the row at its head before
   * it spills (a fast service answers in well under a second; a slow one is not waited for).
   */
  headWaitMs?: number;
  /**
   * Told once when the head job kept the reader waiting that long: the run now waits for
   * the service, not for the client's own work (the CLI then trades CPU for memory).
   */
  onServiceBound?: () => void;
}

type Source = JoinSource & { source: InputSource };
type Held = { outcome?: RowOutcome<AnyRecord>; left: number };

/** Creates the one-pass join of a run (see StreamJoin). */
export function createStreamJoin(s: Source, out: JoinWriter, opts: StreamJoinOptions): StreamJoin {
  return new WindowJoin(s, out, opts);
}

const CANCELLED = new Error('the run stopped before its rows were written');

/** The one-pass join: a window of rows written in order as their batches come back. */
class WindowJoin implements StreamJoin, TrailFeed {
  private window: Pending[] = [];
  private head = 0;
  /** Rows written so far = the index of the next row to write. */
  private written = 0;
  private spillAsked = false;
  private isSpilled = false;
  private fromRow = 0;
  private finished: { notSent: string } | undefined;
  private failure: unknown;
  private pumping: Promise<void> | undefined;
  private wakeRoom: (() => void) | undefined;
  /** Every ended batch's leaves (a few per 1,000 rows; the trailing pass may need any). */
  private readonly batches = new Map<number, LeafResult[]>();
  private readonly fresh = new Map<string, AnyRecord[]>();
  private joinLeaf: ReturnType<typeof leafJoiner>;
  /** Where each batch's rows start (for the trailing pass). */
  private readonly segFirst: number[] = [];
  private readonly segBatch: number[] = [];
  /** The trailing pass, once spilled: resolves to the row it stopped at, or null. */
  private trail: Promise<number | null> | undefined;
  private waiter: { ready: () => boolean; go: () => void; fail: (e: unknown) => void } | undefined;
  readonly dups = new Map<number, number>();
  /** Outcomes of the last rows written (for duplicates yet to be read). */
  private readonly recent = new Map<number, RowOutcome<AnyRecord>>();
  /** Outcomes of rows whose duplicates are in the window (until those are written). */
  private readonly held = new Map<number, Held>();

  constructor(
    private readonly s: Source,
    private readonly out: JoinWriter,
    private readonly opts: StreamJoinOptions,
  ) {
    this.joinLeaf = leafJoiner(s, this.fresh);
  }

  get spilled(): boolean {
    return this.spillAsked;
  }

  invalid(row: InputRow, v: InvalidRow): void {
    this.add({ row, kind: 0, ref: -1, invalid: v });
  }

  sent(row: InputRow, batch: number): void {
    if (this.segBatch[this.segBatch.length - 1] !== batch) {
      this.segFirst.push(row.index);
      this.segBatch.push(batch);
    }
    this.add({ row, kind: 1, ref: batch });
  }

  cached(row: InputRow, outcome: RowOutcome<AnyRecord>): void {
    this.add({ row, kind: 3, ref: -1, outcome });
  }

  duplicate(row: InputRow, rep: number): void {
    if (!this.spillAsked) {
      const h = this.held.get(rep);
      const outcome = this.recent.get(rep);
      if (h) h.left++;
      else if (outcome) this.held.set(rep, { outcome, left: 1 });
      // Not written yet (or being written): its outcome is kept for this row when it is.
      else if (rep >= this.written) this.held.set(rep, { left: 1 });
      // The first occurrence is written and forgotten: this row needs the second pass.
      else this.spill();
    }
    if (this.spillAsked) this.dups.set(rep, (this.dups.get(rep) ?? 0) + 1);
    this.add({ row, kind: 2, ref: rep });
  }

  full(): boolean {
    return !this.spillAsked && this.window.length - this.head > this.windowRows();
  }

  private windowRows(): number {
    const w = this.opts.windowRows;
    return typeof w === 'number' ? w : w();
  }

  async room(): Promise<void> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.spillAsked || this.window.length - this.head <= this.windowRows()) return;
      const p = this.window[this.head] as Pending;
      if (!this.resolvable(p)) {
        // A row never sent (past the budget) is only written at the end: no use waiting.
        if (p.kind === 1 && p.ref < 0) return this.spill();
        // A service that keeps pass 1 waiting this long is slow: stop holding rows.
        if (!(await this.headWithin(this.opts.headWaitMs ?? 0))) {
          this.opts.onServiceBound?.();
          return this.spill();
        }
        continue;
      }
      this.kick();
      await this.pumping;
    }
  }

  batchDone(batch: number, leaves: LeafResult[]): void {
    this.batches.set(batch, leaves);
    this.check();
    if (this.spillAsked) return;
    this.kick();
    this.wakeRoom?.();
  }

  spooled(spoolId: string, records: AnyRecord[]): void {
    if (!this.spillAsked) this.fresh.set(spoolId, records);
  }

  async finish(final: Parameters<StreamJoin['finish']>[0]) {
    this.finished = { notSent: final.notSent };
    this.check();
    this.kick();
    while (this.pumping) await this.pumping;
    if (this.failure !== undefined) throw this.failure;
    // Every batch is final now: a row left in the window means it was spilled meanwhile.
    if (!this.isSpilled && this.window.length - this.head > 0) this.doSpill();
    const stoppedAt = await this.trail;
    if (this.failure !== undefined) throw this.failure;
    if (stoppedAt !== undefined && stoppedAt !== null) {
      const { leaves, dupCounts, notSent } = final;
      await writeJoinedFrom({ ...this.s, leaves, dupCounts, notSent }, this.out, stoppedAt);
    }
    return { ...(await this.out.close()), secondPassFrom: this.isSpilled ? this.fromRow : null };
  }

  cancel(): void {
    this.fail(CANCELLED);
  }

  // The trailing pass's view of the run (TrailFeed).

  until(ready: () => boolean): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure as Error);
    if (ready()) return Promise.resolve();
    return new Promise<void>((go, fail) => {
      this.waiter = { ready, go, fail };
    });
  }

  batchOf(index: number): number {
    // The last batch whose first row is at or before `index` (rows are handed over in order).
    let lo = 0;
    let hi = this.segFirst.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.segFirst[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return this.segBatch[lo] ?? -1;
  }

  leaves(batch: number): LeafResult[] | undefined {
    return this.batches.get(batch);
  }

  notSent(): string | undefined {
    return this.finished?.notSent;
  }

  /** Wakes the trailing pass when what it waits for happened (or the join failed). */
  private check(): void {
    const w = this.waiter;
    if (!w) return;
    if (this.failure !== undefined) {
      this.waiter = undefined;
      w.fail(this.failure);
    } else if (w.ready()) {
      this.waiter = undefined;
      w.go();
    }
  }

  private fail(err: unknown): void {
    this.failure ??= err;
    this.check();
  }

  private resolvable(p: Pending): boolean {
    return p.kind !== 1 || (p.ref >= 0 ? this.batches.has(p.ref) : this.finished !== undefined);
  }

  private doSpill(): void {
    this.isSpilled = true;
    this.fromRow = this.written;
    this.window = [];
    this.head = 0;
    this.fresh.clear();
    this.joinLeaf = leafJoiner(this.s, this.fresh); // drops the lookup it held
    // Duplicates in the dropped window wait for the trailing pass, with what it needs of them.
    const held = new Map<number, RowOutcome<AnyRecord>>();
    for (const [rep, h] of this.held) {
      this.dups.set(rep, (this.dups.get(rep) ?? 0) + h.left);
      if (h.outcome) held.set(rep, h.outcome);
    }
    this.held.clear();
    const { keepOutcomes, farReadRows = 16 * keepOutcomes } = this.opts;
    const start = { fromRow: this.fromRow, held, recent: this.recent, keepOutcomes, farReadRows };
    this.trail = trailJoin(this.s, this.out, this, start).catch((err: unknown) => {
      this.fail(err);
      return null;
    });
  }

  private outcomeOfSent(p: Pending): Promise<RowOutcome<AnyRecord>> {
    const notSent = this.finished?.notSent ?? 'not sent';
    if (p.ref < 0) return Promise.resolve(noRecords('failed', notSent));
    return this.joinLeaf(leafHolding(this.batches.get(p.ref), p.row.index), p.row, notSent);
  }

  private async writeOne(p: Pending): Promise<void> {
    if (p.kind === 0) return this.out.writeInvalid(p.row, p.invalid as InvalidRow);
    if (p.kind === 1 || p.kind === 3) {
      const outcome = p.outcome ?? (await this.outcomeOfSent(p));
      // Only duplicates read later ask for an outcome already written.
      if (this.s.dedupe) {
        this.recent.set(p.row.index, outcome);
        if (this.recent.size > this.opts.keepOutcomes)
          this.recent.delete(this.recent.keys().next().value as number);
      }
      const h = this.held.get(p.row.index);
      if (h) h.outcome = outcome;
      return this.out.write(p.row, outcome);
    }
    const h = this.held.get(p.ref) as Required<Held>;
    if (--h.left === 0) this.held.delete(p.ref);
    return this.out.write(p.row, duplicateOutcome(h.outcome));
  }

  private async pump(): Promise<void> {
    while (!this.isSpilled) {
      if (this.spillAsked) {
        this.doSpill();
        break;
      }
      const p = this.window[this.head];
      if (!p || !this.resolvable(p)) break;
      await this.writeOne(p);
      this.window[this.head++] = undefined as unknown as Pending;
      this.written++;
      if (this.head > 4096 && this.head * 2 > this.window.length) {
        this.window = this.window.slice(this.head);
        this.head = 0;
      }
    }
  }

  private kick(): void {
    if (this.pumping || this.isSpilled || this.failure !== undefined) return;
    this.pumping = this.pump()
      .catch((err: unknown) => {
        this.fail(err);
      })
      .finally(() => {
        this.pumping = undefined;
        // A row handed over while the pump was on its way out must not wait for the next event.
        const p = this.window[this.head];
        if (this.failure === undefined && p && this.resolvable(p)) this.kick();
      });
  }

  private spill(): void {
    this.spillAsked = true;
    if (this.pumping) return; // the pump spills between two rows
    if (!this.isSpilled) this.doSpill();
  }

  /** Waits until a batch is done (true) or `ms` pass (false). */
  private headWithin(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeRoom = undefined;
        resolve(false);
      }, ms);
      this.wakeRoom = () => {
        clearTimeout(timer);
        this.wakeRoom = undefined;
        resolve(true);
      };
    });
  }

  private add(p: Pending): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.spillAsked) return this.check();
    this.window.push(p);
    if (this.window.length - this.head === 1) this.kick();
  }
}
