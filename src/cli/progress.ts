import type { RunProgress } from '../pipeline/types.js';
import { formatDuration } from '../config/duration.js';

/** Renders run progress on stderr: an ora spinner on a terminal, a plain line every few seconds elsewhere. */
export interface ProgressView {
  update(p: RunProgress): void;
  /** Writes a line of talk (a warning) without tearing the spinner; shown even when quiet. */
  note(line: string): void;
  stop(): void;
}

const PLAIN_EVERY_MS = 5000;

function describe(p: RunProgress, elapsedMs: number): string {
  const what =
    p.phase === 'reading'
      ? `reading: ${p.rowsRead.toLocaleString('en-US')} rows`
      : p.phase === 'waiting'
        ? `waiting for results: ${p.rowsRead.toLocaleString('en-US')} rows`
        : `writing: ${p.rowsWritten.toLocaleString('en-US')} of ${p.rowsRead.toLocaleString('en-US')} rows`;
  return `${what}, jobs ${p.jobsDone}/${p.jobsTotal}, credits ${p.creditsCharged}, ${formatDuration(elapsedMs)}`;
}

/** True under CI: `CI` set to anything but empty, `0` or `false` (as `CI=false npm test` means). */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
}

/** Creates the progress view for this run (silent when quiet or --no-progress). */
export async function createProgress(opts: {
  quiet: boolean;
  enabled: boolean;
  now?: () => number;
  /** Where progress goes; process.stderr unless a test stands in a terminal of its own. */
  stream?: NodeJS.WriteStream;
}): Promise<ProgressView> {
  const now = opts.now ?? Date.now;
  const stream = opts.stream ?? process.stderr;
  const start = now();
  const note = (line: string) => void stream.write(`${line}\n`);
  if (opts.quiet || !opts.enabled) return { update() {}, note, stop() {} };
  // A terminal that reports no width (some pseudo-TTYs) would make the spinner redraw forever;
  // a dumb one cannot move its cursor back over the line.
  const tty =
    stream.isTTY === true &&
    (stream.columns ?? 0) > 0 &&
    !inCi(process.env) &&
    process.env.TERM !== 'dumb';
  if (tty) {
    const { default: ora } = await import('ora');
    // isEnabled: the choice is made above; ora's own test (any CI variable, even empty) could
    // disagree and print one "- starting" line, then nothing. discardStdin off: stdin may be
    // the input itself, and a run must not fight over the terminal.
    const spinner = ora({ stream, text: 'starting', isEnabled: true, discardStdin: false }).start();
    return {
      update: (p) => {
        spinner.text = describe(p, now() - start);
      },
      note: (line) => {
        // Cleared first, drawn again after: the line stays above the spinner, whole.
        spinner.clear();
        note(line);
        spinner.render();
      },
      stop: () => spinner.stop(),
    };
  }
  let last = 0;
  return {
    update: (p) => {
      const t = now();
      if (t - last < PLAIN_EVERY_MS) return;
      last = t;
      stream.write(`enrich: ${describe(p, t - start)}\n`);
    },
    note,
    stop() {},
  };
}
