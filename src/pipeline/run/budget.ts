/**
 * The run's spending limit (`maxCredits`). New rows take their credits as they are
 * classified (rows past the limit are never sent); batches an earlier run journaled, and
 * credit retries, take theirs just before their POST, all or nothing, since a journaled
 * batch must be sent again exactly as it was or not at all. A batch the service already
 * accepted costs nothing more.
 */
export interface Budget {
  /** The limit as given (for messages); undefined when the run has none. */
  readonly limit: number | undefined;
  /** Credits left to commit (Infinity without a limit). */
  left: number;
  /** What one row may cost: 1 for contacts, `top` for companies. */
  readonly perRow: number;
}

/** A budget of `limit` credits (none: no limit) for rows costing `perRow` each. */
export function createBudget(limit: number | undefined, perRow: number): Budget {
  return { limit, left: limit ?? Infinity, perRow };
}

/** How many more rows the budget pays for (Infinity without a limit). */
export function affordableRows(budget: Budget): number {
  return Math.floor(budget.left / budget.perRow);
}

/** Takes the credits of `rows` rows when they all fit (true), else takes nothing (false). */
export function takeCredits(budget: Budget, rows: number): boolean {
  if (rows > affordableRows(budget)) return false;
  budget.left -= rows * budget.perRow;
  return true;
}
