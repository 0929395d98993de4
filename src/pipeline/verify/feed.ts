/**
 * The feed between the two passes of a verification run (run-verify.ts, write-verified.ts):
 * events, rows read and written, and the stop.
 */
export function createFeed(interrupted: () => boolean) {
  let wake: (() => void) | undefined;
  let event: Promise<void> | undefined;
  let stopped = false;
  let read = 0;
  let written = 0;
  const notify = () => {
    const w = wake;
    wake = undefined;
    event = undefined;
    w?.();
  };
  return {
    notify,
    next: () => (event ??= new Promise<void>((r) => (wake = r))),
    wrote: () => {
      written++;
      notify();
    },
    written: () => written,
    readRow: () => ++read,
    read: () => read,
    stopped: () => stopped || interrupted(),
    stop: () => {
      stopped = true;
      notify();
    },
  };
}

/** The feed of one run. */
export type Feed = ReturnType<typeof createFeed>;
