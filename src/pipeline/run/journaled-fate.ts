import type { BatchState } from '../journal/journal.js';

/**
 * What a resumed run does with a batch an earlier attempt journaled, decided in one place for
 * the run (batch-task.ts) and its dry run (plan.ts):
 * - `new`: not journaled: sent (its rows took their credits as they were classified);
 * - `split`: sent in parts of `splitSize` rows (`<id>.<k>`), each decided alike;
 * - `answered`: its answers are in the journal's spool: written from there, nothing sent;
 * - `expired`: its results expired before they were downloaded: its rows end `failed`;
 * - `job`: the service accepted it: its results are downloaded, nothing sent or paid again;
 * - `unconfirmed`: its POST may have reached the service, which never confirmed it (and may
 *   have charged it): not sent again, its rows end `failed`, unless sending it again is safe
 *   (`mayResend`: `--resend-unconfirmed`, or a service seen to honour idempotency keys);
 * - `resend`: sent again with its journaled idempotency key, taking its credits then.
 */
export type JournaledFate =
  'new' | 'split' | 'answered' | 'expired' | 'job' | 'unconfirmed' | 'resend';

export function journaledFate(state: BatchState | undefined, mayResend: boolean): JournaledFate {
  if (!state) return 'new';
  if (state.splitSize) return 'split';
  if (state.spooled) return 'answered';
  if (state.expired) return 'expired';
  if (state.job) return 'job';
  return mayHaveReached(state) && !mayResend ? 'unconfirmed' : 'resend';
}

/**
 * A journaled batch whose POST may have reached the service without a confirmed answer:
 * unconfirmed, or submitted by a run that stopped before the answer came, or failed for a
 * reason that proves nothing (INTERNAL). (Other journaled failures are ones where nothing
 * was processed: refused, or never connected.)
 */
function mayHaveReached(state: BatchState): boolean {
  // An INTERNAL failure (a bug, or the process giving out) says nothing of what was sent.
  return state.unconfirmed !== undefined || (state.failed?.code ?? 'INTERNAL') === 'INTERNAL';
}
