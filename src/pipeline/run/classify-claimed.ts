import type { InputRow } from '../../io/read.js';
import type { BatchItem, CachedAnswer } from '../types.js';
import type { CacheLookup } from './cache-hits.js';
import {
  classifier,
  type BatchReady,
  type Classifiable,
  type Classifier,
  type ClassifyState,
  type HitsSpan,
  type RowClass,
} from './classify.js';
import type { RefillRow } from './refill.js';
import type { Holder, RowClaims } from './row-claims.js';

/** How the classification claims rows before they are sent (row-claims.ts). */
export interface ClaimsUse {
  claims: RowClaims;
  /** The claim key of a request key (the results cache's key of the request). */
  keyOf(requestKey: string): string;
  /** When to stop waiting for another run's rows (the run's --timeout), and the clock. */
  deadline: number;
  now: () => number;
  /**
   * Settles the jobs of runs that ended (or died) holding rows this one waited for: their
   * answers go to the cache (waited for until the deadline). None: such rows are sent again.
   */
  settleRuns?: (runs: string[]) => Promise<void>;
  /** Told when the run waits for rows another run is sending (each time it does), and how many. */
  onWaiting?: (holder: Holder, rows: number) => void;
  /** Told when that wait is over. */
  onWaited?: () => void;
}

/**
 * What claims add to the classification:
 * - `held`: a row another run was sending when this one read it, never sent by this one as
 *   part of a batch: answered from the cache once that run's answer is in (`answer`), or sent
 *   again by this run (no `answer`: the consumer has its outcome from the `resend` before), or
 *   still held by that run at the deadline (`heldBy`: not sent).
 * - `resend`: rows whose claim ended with no answer in the cache: to send now, one per request,
 *   before the rows of their group are handed out.
 */
export type HeldEvent =
  | { t: 'held'; row: InputRow; key: string; answer?: CachedAnswer; heldBy?: Holder }
  | { t: 'resend'; rows: RefillRow[] };

/** Rows read between two claims at most (without a batch filling up). */
export const GROUP_ROWS = 1024;

/** One row of a group: its class, and for a row to send, its item and whether it may be held back. */
interface Entry {
  c: RowClass | Extract<HeldEvent, { t: 'held' }>;
  item?: BatchItem;
  fresh?: boolean;
}

/**
 * classifyRows with claims: rows are classified as they are read, and handed out a group at a
 * time (up to the row that fills a batch, or GROUP_ROWS rows), once the group's rows to send are
 * claimed. Rows another live run claimed first are taken out of the batch and noted as cache hits
 * (journaled so, before any batch: a resume rebuilds its batches alike and sends such a row again
 * if its answer never came); the batch being filled is sent at once, and only then does the run
 * wait for those rows (see row-claims.ts: never waiting while holding claims it has not sent).
 * Rows of a batch an earlier attempt journaled, and rows it decided, are claimed, never held back.
 */
export async function* classifyClaimed(
  run: Classifiable,
  rows: AsyncIterable<InputRow>,
  state: ClassifyState,
  use: ClaimsUse,
): AsyncGenerator<RowClass | BatchReady | HitsSpan | HeldEvent> {
  const k = classifier(run, state);
  let group: Entry[] = [];
  let last = -1;
  for await (const row of rows) {
    last = row.index;
    const c = k.one(row, false);
    const e: Entry = { c };
    if (c.t === 'send') {
      e.item = k.items[k.items.length - 1] as BatchItem;
      e.fresh = !k.journaled && !k.hits.decided(row.index);
    }
    group.push(e);
    const full = c.t === 'send' && k.full();
    if (full || group.length >= GROUP_ROWS) {
      yield* handOut(k, group, use, state.cache, full);
      group = [];
    }
  }
  // Stryker disable next-line BooleanLiteral: at the end, the group's span and last batch are handed out right after it either way
  yield* handOut(k, group, use, state.cache, false);
  yield* k.span(last);
  if (k.items.length > 0) yield k.ready();
}

/** Claims a group's rows to send, settles those another run holds, and hands the group out. */
async function* handOut(
  k: Classifier,
  group: Entry[],
  use: ClaimsUse,
  cache: CacheLookup | undefined,
  full: boolean,
): AsyncGenerator<RowClass | BatchReady | HitsSpan | HeldEvent> {
  const fresh = new Map<string, Entry[]>();
  const forced: string[] = [];
  for (const e of group) {
    if (!e.item) continue;
    const key = use.keyOf(e.item.key);
    if (!e.fresh) forced.push(key);
    else {
      const same = fresh.get(key);
      if (same) same.push(e);
      else fresh.set(key, [e]);
    }
  }
  if (forced.length > 0) await use.claims.claim(forced, true);
  const held = fresh.size > 0 ? await use.claims.claim([...fresh.keys()]) : new Map();
  const waiting = new Map<string, Entry[]>();
  const out = new Set<number>();
  const late: string[] = [];
  for (const [key, entries] of fresh) {
    const request = (entries[0]?.item as BatchItem).key;
    if (held.has(key)) {
      waiting.set(key, entries);
      for (const e of entries) e.c = { t: 'held', row: e.c.row, key: request };
    } else {
      // Answered since it was looked up: another run sent it, and gave it back (its answer
      // committed first) before this claim. Taken from the cache, and the claim given back.
      // Stryker disable next-line OptionalChaining: claims are made only with a results cache that is read and written (run-claims.ts)
      const answer = cache?.fresh(request);
      if (!answer) continue;
      late.push(key);
      for (const e of entries) e.c = { t: 'cached', row: e.c.row, key: request, answer };
    }
    for (const e of entries) out.add(e.c.row.index);
  }
  if (out.size > 0) k.drop(out);
  if (late.length > 0) await use.claims.release(late);
  // The cache decisions, in order: a row held back is a hit (its answer is taken from the cache).
  for (const e of group)
    if (e.c.t === 'cached' || e.c.t === 'held') k.hits.note(e.c.row.index, true);
    else if (e.c.t === 'send' || e.c.t === 'over-budget') k.hits.note(e.c.row.index, false);
  // Stryker disable next-line UnaryOperator: an empty group waits for nothing and fills no batch, so lastRow is not read
  const lastRow = group[group.length - 1]?.c.row.index ?? -1;
  if (waiting.size > 0) {
    // Journaled before anything is sent; then what this run holds is sent before it waits.
    yield* k.span(lastRow);
    if (k.items.length > 0) yield k.ready();
    use.onWaiting?.([...held.values()][0] as Holder, waiting.size);
    // Stryker disable next-line OptionalChaining: claims are made only with a results cache that is read and written (run-claims.ts)
    yield* settleHeld(waiting, held, use, (request) => cache?.fresh(request));
    use.onWaited?.();
  }
  for (const e of group) yield e.c;
  if (full && waiting.size === 0) {
    yield* k.span(lastRow);
    // Empty when every row of it turned out answered meanwhile: it goes on filling.
    if (k.items.length > 0) yield k.ready();
  }
}

/**
 * Waits for the rows other runs hold: each is answered from the cache once its answer is in,
 * sent by this run when its claim ended without one (claimed first: a third run may have taken
 * it meanwhile, and is waited for in turn), or left with its holder at the deadline. A holder
 * that ended without the answers has its jobs settled first (`settleRuns`).
 */
async function* settleHeld(
  waiting: Map<string, Entry[]>,
  holders: Map<string, Holder>,
  use: ClaimsUse,
  answer: (request: string) => CachedAnswer | undefined,
): AsyncGenerator<HeldEvent> {
  const requestOf = (key: string) => ((waiting.get(key) as Entry[])[0]?.item as BatchItem).key;
  const answerOf = (key: string) => answer(requestOf(key));
  const settle = (key: string, to: { answer?: CachedAnswer; heldBy?: Holder }) => {
    for (const e of waiting.get(key) as Entry[])
      e.c = { ...(e.c as Extract<HeldEvent, { t: 'held' }>), ...to };
  };
  const settledRuns = new Set<string>();
  let pending = [...waiting.keys()];
  while (pending.length > 0) {
    const still = await use.claims.settle(pending, use.deadline, (key) => !!answerOf(key));
    for (const [key, h] of still) holders.set(key, h);
    let unanswered = answeredOrHeld(pending, answerOf, still, settle);
    if (unanswered.length === 0) return;
    // Their holders ended without their answers: those runs' jobs are downloaded first.
    // Stryker disable next-line OptionalChaining: every key waited for has its holder in `holders`
    const ended = new Set(unanswered.flatMap((k) => holders.get(k)?.run ?? []));
    for (const r of settledRuns) ended.delete(r);
    if (ended.size > 0 && use.settleRuns) {
      for (const r of ended) settledRuns.add(r);
      await use.settleRuns([...ended]);
      unanswered = answeredOrHeld(unanswered, answerOf, new Map(), settle);
      if (unanswered.length === 0) return;
    }
    if (use.now() >= use.deadline) {
      // Time is up: left with the run that held them (not sent now; the next run takes them).
      for (const key of unanswered) settle(key, { heldBy: holders.get(key) as Holder });
      return;
    }
    const reheld = await use.claims.claim(unanswered);
    for (const [key, h] of reheld) holders.set(key, h);
    // Still held by a run that ended, its jobs settled already (its journal could not be
    // read): left with it, not sent (the next run settles it again).
    const stuck = (key: string) =>
      !!reheld.get(key)?.ended && settledRuns.has(reheld.get(key)?.run as string);
    for (const key of unanswered)
      if (stuck(key)) settle(key, { heldBy: holders.get(key) as Holder });
    const send = unanswered.filter((key) => !reheld.has(key));
    if (send.length > 0)
      yield {
        t: 'resend',
        rows: send.map((key) => {
          const e = (waiting.get(key) as Entry[])[0] as Entry;
          return { row: e.c.row, item: e.item as BatchItem };
        }),
      };
    pending = unanswered.filter((key) => reheld.has(key) && !stuck(key));
  }
}

/**
 * Waits for rows this run meant to send outside its classification (a resume's rows whose cached
 * answers are gone, refill.ts) that other live runs held when it claimed them (`held`: by claim
 * key), as the classification waits for its own (settleHeld): each is answered from the cache
 * (`answer`), or sent by this run (`resend`) when its claim ended without one, or still held at
 * the deadline: those are returned, with who holds them.
 */
export async function waitForRows(
  held: ReadonlyMap<string, { row: RefillRow; by: Holder }>,
  use: ClaimsUse,
  answer: (request: string) => CachedAnswer | undefined,
  resend: (rows: RefillRow[]) => Promise<void>,
): Promise<{ row: RefillRow; by: Holder }[]> {
  const waiting = new Map<string, Entry[]>();
  const holders = new Map<string, Holder>();
  for (const [key, { row: r, by }] of held) {
    // Stryker disable next-line StringLiteral: these entries are never handed out: their tag is not read
    waiting.set(key, [{ c: { t: 'held', row: r.row, key: r.item.key }, item: r.item }]);
    holders.set(key, by);
  }
  const first = holders.values().next();
  if (first.done) return [];
  use.onWaiting?.(first.value, waiting.size);
  for await (const e of settleHeld(waiting, holders, use, answer))
    if (e.t === 'resend') await resend(e.rows);
  use.onWaited?.();
  return [...waiting.values()].flatMap(([e]) => {
    const c = e?.c as Extract<HeldEvent, { t: 'held' }>;
    return c.heldBy ? [{ row: { row: c.row, item: e?.item as BatchItem }, by: c.heldBy }] : [];
  });
}

/** Settles the keys answered (or held at the deadline, in `still`); returns the others. */
function answeredOrHeld(
  keys: readonly string[],
  answerOf: (key: string) => CachedAnswer | undefined,
  still: ReadonlyMap<string, Holder>,
  settle: (key: string, to: { answer?: CachedAnswer; heldBy?: Holder }) => void,
): string[] {
  const left: string[] = [];
  for (const key of keys) {
    const answer = answerOf(key);
    const heldBy = answer ? undefined : still.get(key);
    if (answer) settle(key, { answer });
    else if (heldBy) settle(key, { heldBy });
    else left.push(key);
  }
  return left;
}
