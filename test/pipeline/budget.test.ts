import { describe, expect, it } from 'vitest';
import { affordableRows, createBudget, takeCredits } from '../../src/pipeline/run/budget.js';

// The spending limit in numbers (issue 21): a mutant of any of these sent 20 rows for 60
// credits under --top 3 --max-credits 10.

describe('the budget of --max-credits', () => {
  it('--top 3 --max-credits 10 pays for 3 rows (9 credits), then for none', () => {
    const b = createBudget(10, 3);
    expect(b.limit).toBe(10);
    expect(affordableRows(b)).toBe(3);
    expect(takeCredits(b, 3)).toBe(true);
    expect(b.left).toBe(1);
    expect(affordableRows(b)).toBe(0);
    expect(takeCredits(b, 1)).toBe(false);
    expect(b.left).toBe(1);
  });

  it('takes a batch all or nothing: one that does not fit takes nothing', () => {
    const b = createBudget(50, 1);
    expect(takeCredits(b, 100)).toBe(false);
    expect(b.left).toBe(50);
    expect(takeCredits(b, 50)).toBe(true);
    expect(b.left).toBe(0);
    expect(takeCredits(b, 0)).toBe(true);
  });

  it('without a limit every row is affordable', () => {
    const b = createBudget(undefined, 5);
    expect(b.limit).toBeUndefined();
    expect(affordableRows(b)).toBe(Infinity);
    expect(takeCredits(b, 1_000_000)).toBe(true);
  });
});
