import { setMaxListeners } from 'node:events';
import { removeLiveTempsSync } from '../io/stale-temps.js';

/**
 * What an interrupted run says: how to resume it from its journal; a `--sandbox` run's journal
 * and service end with it, so the same command starts over.
 */
export const interruptedText = (command: string, sandbox = false): string =>
  sandbox
    ? `enrich: interrupted; a --sandbox run keeps no journal (its service ends with it). Start over with:\n  ${command}\n`
    : `enrich: interrupted; the journal is saved. Resume with:\n  ${command}\n`;

/**
 * Ctrl-C (or SIGTERM) once: `signal` aborts (a run stops sending, keeps its journal; a call's
 * waits end, never a request on its way), saying `stopping`; twice: leave at once (exit 130),
 * without an output's temp file, saying `quit` (a run's `interruptedText`).
 */
export function interruptOnSignal(
  stopping: string,
  quit: string,
): { signal: AbortSignal; dispose(): void } {
  const aborter = new AbortController();
  // Every job being polled waits on this one signal: many listeners are expected, not a leak.
  setMaxListeners(0, aborter.signal);
  const onSignal = () => {
    if (aborter.signal.aborted) {
      // A second Ctrl-C: leave now; the journal is safe, a half-written output is not kept.
      removeLiveTempsSync();
      process.stderr.write(`\n${quit}`);
      process.exit(130);
    }
    process.stderr.write(`\nenrich: stopping: ${stopping} (Ctrl-C again to quit at once)\n`);
    aborter.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: aborter.signal,
    dispose() {
      // Once interrupted the process is on its way out (it ends with the event loop, after
      // sockets and timers close): a second Ctrl-C until then still leaves at once with 130.
      if (aborter.signal.aborted) return;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
