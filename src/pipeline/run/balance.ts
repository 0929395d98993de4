/**
 * What the service said of the account's balance during a run (DESIGN.md section 5: spend
 * from the service's numbers). Every answer carries `remaining_credits` (api-spec.md
 * section 3); the run notes each one in the order it came. The spec has no balance
 * endpoint, so the balance before the run's first charge is not known: the drop from the
 * first figure to the last is what the service shows was spent while the run ran (by this
 * run, or by anything else using the account), and a rise (a top-up) ends what can be said.
 */
export interface BalanceSeen {
  remaining: number;
  /** Epoch ms the answer came. */
  at: number;
}

export interface BalanceLog {
  /**
   * Notes a figure that came at `at`. `sent`: the mark() taken when its request was sent, when
   * known; only a figure above one of an answer that came before then counts as a rise
   * (roseAfter): answers to requests in flight together may come in any order.
   */
  seen(remaining: unknown, at: number, sent?: number): void;
  /** Marks a request about to be sent: how many figures came before it. */
  mark(): number;
  /** True when a rise (a top-up, a refill) was seen in a figure that came after `mark`. */
  roseAfter(mark: number): boolean;
  /** The first and last figures of the run, and the drop between them (null after a rise). */
  report(): { first: BalanceSeen; last: BalanceSeen; drop: number | null } | null;
}

export function balanceLog(): BalanceLog {
  let first: BalanceSeen | undefined;
  let last: BalanceSeen | undefined;
  let rose = false;
  // The lowest figure so far, each time it went down, with how many figures came before it.
  const lows: { remaining: number; n: number }[] = [];
  let count = 0;
  let riseAt = -1;
  return {
    seen(remaining, at, sent) {
      if (typeof remaining !== 'number' || !Number.isFinite(remaining)) return;
      if (last && remaining > last.remaining) rose = true;
      const before = sent === undefined ? undefined : lowestBefore(lows, sent);
      if (before !== undefined && remaining > before) riseAt = count;
      const low = lows[lows.length - 1];
      if (!low || remaining < low.remaining) lows.push({ remaining, n: count });
      count++;
      last = { remaining, at };
      first ??= last;
    },
    mark: () => count,
    roseAfter: (mark) => riseAt >= mark,
    report() {
      if (!first || !last) return null;
      return { first, last, drop: rose ? null : first.remaining - last.remaining };
    },
  };
}

/** The lowest of the first `n` figures (`lows`: where the lowest went down, in order). */
function lowestBefore(lows: readonly { remaining: number; n: number }[], n: number) {
  let lo = 0;
  let hi = lows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((lows[mid] as { n: number }).n < n) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : (lows[lo - 1] as { remaining: number }).remaining;
}
