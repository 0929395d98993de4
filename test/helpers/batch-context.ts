import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import type { Journal } from '../../src/pipeline/journal/journal.js';
import { balanceLog } from '../../src/pipeline/run/balance.js';
import type { BatchContext } from '../../src/pipeline/run/batch-context.js';
import { createBudget } from '../../src/pipeline/run/budget.js';
import type { BulkApi } from '../../src/pipeline/types.js';

/** The context of one batch task for unit tests: no limit, no stop, an instant clock. */
export function batchContext(
  journal: Journal,
  api: BulkApi,
  o: Partial<BatchContext> = {},
): BatchContext {
  let t = 1_000;
  return {
    kind: 'contacts',
    metadata: {},
    journal,
    api,
    env: { now: () => t, sleep: async (ms) => void (t += ms), random: () => 0.5 },
    balance: balanceLog(),
    deadline: 3_600_000,
    wait: true,
    resendUnconfirmed: false,
    words: CLI_WORDS,
    budget: createBudget(undefined, 1),
    splits: { accepted: false, blind: 0 },
    limit: (task) => task(),
    stopped: () => undefined,
    stop: () => undefined,
    ...o,
  };
}
