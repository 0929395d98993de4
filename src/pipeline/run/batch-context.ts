import type { Journal } from '../journal/journal.js';
import type {
  BatchItem,
  BulkApi,
  BulkKind,
  JobEvent,
  LeafResult,
  RunWords,
  SentItem,
} from '../types.js';
import type { BalanceLog } from './balance.js';
import type { Budget } from './budget.js';
import type { FlightWatch } from './flight-gate.js';
import type { PollEnv } from './poll.js';
import type { SplitAllowance } from './submit.js';

/** Shared, read-mostly context of every batch task of a run. */
export interface BatchContext {
  kind: BulkKind;
  metadata: Readonly<Record<string, unknown>>;
  journal: Journal;
  api: BulkApi;
  env: PollEnv;
  deadline: number;
  wait: boolean;
  /** Send again batches the service may have charged without confirming them. */
  resendUnconfirmed: boolean;
  words: RunWords;
  /** Every `remaining_credits` the run's answers carried, in the order they came. */
  balance: BalanceLog;
  /** Shared by every batch of the run: taken when rows are classified, or before a POST. */
  budget: Budget;
  /** How many more batches may be halved on a 400 that does not say why (submit.ts). */
  splits: SplitAllowance;
  /** Bounds the HTTP requests in flight. */
  limit: <T>(task: () => Promise<T>) => Promise<T>;
  /** Told when each job is accepted, still running, and ends (sizes the jobs in flight). */
  flight?: FlightWatch;
  /**
   * Returns the reason new submissions must not be made, if any. `paid`: the batch's credits
   * were already set aside within --max-credits, so the budget running out does not stop it.
   */
  stopped(paid?: boolean): string | undefined;
  /** Called when a failure must stop the whole run (auth, network, credits; `budget`: --max-credits reached). */
  stop(code: string, message: string, budget?: boolean): void;
  /** Hands the records of a batch just spooled to the join (which then need not read them back). */
  spooled?: (spoolId: string, records: Record<string, unknown>[]) => void;
  /** Told what happens to each job: submitted, still running (with the service's progress), done, sent again. */
  onJob?: (event: JobEvent) => void;
  /** Keeps the answers of a batch just spooled in the results cache (absent: no cache, or `cache: false`). */
  remember?: (
    items: readonly SentItem[],
    records: readonly Record<string, unknown>[],
    remaining: number | null,
  ) => void | Promise<void>;
  /**
   * Marks in the results cache the requests of a batch whose POST got no answer, so that no
   * other run sends them again by itself (absent: no cache, or `cache: false`).
   */
  markUnconfirmed?: (items: readonly SentItem[]) => void;
  /**
   * Keeps the keys of a batch's requests beside the journal before its POST, where a later run
   * finds them if this one dies with the POST unanswered (batch-keys.ts; absent: no cache).
   * Written before the batch's submit line; returns what flushes them to the disk.
   */
  keepKeys?: (id: string, items: readonly SentItem[]) => Promise<() => Promise<void>>;
}

/** A batch on its way: `accepted` once the service holds it (or it needs no POST), `done` once it ends. */
export interface BatchRun {
  accepted: Promise<void>;
  done: Promise<LeafResult[]>;
}

/** Starts a batch (batch-task.ts's `startBatch`, handed to the stages that need it). */
export type StartBatch = (
  ctx: BatchContext,
  id: string,
  items: BatchItem[],
  paid: boolean,
) => BatchRun;
