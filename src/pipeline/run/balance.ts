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
  seen(remaining: unknown, at: number): void;
  /** The first and last figures of the run, and the drop between them (null after a rise). */
  report(): { first: BalanceSeen; last: BalanceSeen; drop: number | null } | null;
}

export function balanceLog(): BalanceLog {
  let first: BalanceSeen | undefined;
  let last: BalanceSeen | undefined;
  let rose = false;
  return {
    seen(remaining, at) {
      if (typeof remaining !== 'number' || !Number.isFinite(remaining)) return;
      if (last && remaining > last.remaining) rose = true;
      last = { remaining, at };
      first ??= last;
    },
    report() {
      if (!first || !last) return null;
      return { first, last, drop: rose ? null : first.remaining - last.remaining };
    },
  };
}
