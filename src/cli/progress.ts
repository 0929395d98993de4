import { fstatSync, statSync, type Stats } from 'node:fs';
import { formatDuration } from '../config/duration.js';
import type { RunProgress } from '../pipeline/types.js';
import { runText, type ProgressText } from './progress-text.js';

/**
 * Renders run progress on stderr: an ora spinner on a terminal, whose clock and counters tick
 * even while nothing changes; elsewhere (CI, a log file), or on a terminal the run's rows may
 * show on too (rowsMayShow), a plain line every few seconds, and never more than
 * PLAIN_QUIET_MS without one (CI systems kill jobs that print nothing).
 */
export interface ProgressView<P = RunProgress> {
  update(p: P): void;
  /** Writes a line of talk (a warning) without tearing the spinner; shown even when quiet. */
  note(line: string): void;
  stop(): void;
}

/** Plain lines: at most one per PLAIN_EVERY_MS as the run reports, at least one per PLAIN_QUIET_MS. */
export const PLAIN_EVERY_MS = 5000;
export const PLAIN_QUIET_MS = 10_000;
/** How often the spinner's text is redrawn with the time now (ora draws its frames in between). */
const TICK_MS = 200;

/** True under CI: `CI` set to anything but empty, `0` or `false` (as `CI=false npm test` means). */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
}

interface ViewParts<P> {
  stream: NodeJS.WriteStream;
  now: () => number;
  start: number;
  color: boolean;
  line: ProgressText<P>;
}

/** What the run looks like now: its last progress with the time now, or that it is starting. */
function texter<P>(v: ViewParts<P>) {
  let last: P | undefined;
  return {
    set: (p: P) => void (last = p),
    text: () => {
      const t = v.now();
      return last === undefined
        ? `starting, ${formatDuration(t - v.start)}`
        : v.line(last, t - v.start, t);
    },
  };
}

async function spinnerView<P>(v: ViewParts<P>): Promise<ProgressView<P>> {
  const { default: ora } = await import('ora');
  const state = texter(v);
  // isEnabled: the choice is made by the caller; ora's own test (any CI variable, even empty)
  // could disagree and print one "- starting" line, then nothing. discardStdin off: stdin may
  // be the input itself, and a run must not fight over the terminal. color false: no colour
  // codes at all (NO_COLOR, --no-color); the spinner still redraws its own line.
  const spinner = ora({
    stream: v.stream,
    text: state.text(),
    color: v.color ? 'cyan' : false,
    isEnabled: true,
    discardStdin: false,
  }).start();
  const draw = () => void (spinner.text = state.text());
  const timer = setInterval(draw, TICK_MS);
  timer.unref();
  return {
    // Drawn at the next tick: a run may report after every answer, thousands a second.
    update: (p) => state.set(p),
    note: (line) => {
      // Cleared first, drawn again after: the line stays above the spinner, whole.
      spinner.clear();
      v.stream.write(`${line}\n`);
      spinner.render();
    },
    stop: () => {
      clearInterval(timer);
      spinner.stop();
    },
  };
}

function plainView<P>(v: ViewParts<P>): ProgressView<P> {
  const state = texter(v);
  let lastLine = v.start;
  let updated = false;
  const print = () => {
    lastLine = v.now();
    v.stream.write(`enrich: ${state.text()}\n`);
  };
  // Checked every second: a wait for a slow job still prints a line every PLAIN_QUIET_MS.
  const timer = setInterval(() => {
    if (v.now() - lastLine >= PLAIN_QUIET_MS) print();
  }, 1000);
  timer.unref();
  return {
    update: (p) => {
      state.set(p);
      // The first report prints at once (a short run shows one line); later ones every few seconds.
      if (updated && v.now() - lastLine < PLAIN_EVERY_MS) return;
      updated = true;
      print();
    },
    note: (line) => void v.stream.write(`${line}\n`),
    stop: () => clearInterval(timer),
  };
}

/** Creates the progress view for this run (silent when quiet or --no-progress). */
export async function createProgress<P = RunProgress>(opts: {
  quiet: boolean;
  enabled: boolean;
  /** Colour in the spinner (false with NO_COLOR or --no-color). */
  color?: boolean;
  now?: () => number;
  /** Where progress goes; process.stderr unless a test stands in a terminal of its own. */
  stream?: NodeJS.WriteStream;
  /** The run's line (runText() or verifyText()); a bulk run's by default. */
  line?: ProgressText<P>;
  /**
   * The run writes its rows where they may show on the terminal too (rowsMayShow): a spinner
   * redrawing its line there would meet them on one line, so it prints plain lines instead.
   */
  rowsMayShow?: boolean;
}): Promise<ProgressView<P>> {
  const now = opts.now ?? Date.now;
  const stream = opts.stream ?? process.stderr;
  const line = opts.line ?? (runText() as unknown as ProgressText<P>);
  const parts = { stream, now, start: now(), color: opts.color ?? true, line };
  if (opts.quiet || !opts.enabled)
    return { update() {}, note: (line) => void stream.write(`${line}\n`), stop() {} };
  // A terminal that reports no width (some pseudo-TTYs) would make the spinner redraw forever;
  // a dumb one cannot move its cursor back over the line.
  const tty =
    stream.isTTY === true &&
    (stream.columns ?? 0) > 0 &&
    !inCi(process.env) &&
    process.env.TERM !== 'dumb';
  return tty && opts.rowsMayShow !== true ? spinnerView(parts) : plainView(parts);
}

/**
 * True when rows written to `target` (a path; `-` or undefined: stdout) may show on the
 * terminal: it is one, or a pipe or socket whose reader may print there (`| cat`, `| less`; a
 * pipe cannot tell where its reader writes). A regular file, /dev/null, or a path that does not
 * exist yet is no screen. Standard output is asked by descriptor: a bulk run's worker thread
 * shares the process's (launch.ts) and is told whether it is a terminal.
 */
export function rowsMayShow(target: string | undefined): boolean {
  const toStdout = target === undefined || target === '-';
  if (toStdout && process.stdout.isTTY === true) return true;
  const info = statOf(toStdout ? 1 : target);
  if (!info) return false;
  if (info.isFIFO() || info.isSocket()) return true;
  return info.isCharacterDevice() && info.rdev !== statOf('/dev/null')?.rdev;
}

function statOf(at: number | string): Stats | undefined {
  try {
    return typeof at === 'number' ? fstatSync(at) : statSync(at);
  } catch {
    return undefined;
  }
}
