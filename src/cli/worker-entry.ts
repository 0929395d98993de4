/**
 * The worker a bulk run starts in (launch.ts). Its stdio are pipes to the main thread, so it
 * is told what the process's are (a terminal or not, and how wide), and it gets the signals
 * and the errors of the real standard output from the main thread, as events on its own
 * `process` and `process.stdout`: the CLI's handlers (Ctrl-C once, twice; a closed pipe) run
 * as they do in the main thread.
 */
import { clearLine, clearScreenDown, cursorTo, moveCursor } from 'node:readline';
import { WriteStream } from 'node:tty';
import { parentPort, workerData } from 'node:worker_threads';
import {
  WORKER_YOUNG_GENERATION_MB,
  type Terminal,
  type TerminalStream,
  type ToWorker,
} from './launch.js';
import { main } from './main.js';

const { argv, terminal } = workerData as { argv: string[]; terminal: Terminal };

/**
 * Makes a worker's stdio stream report what the process's stream is; a terminal's also gets
 * the cursor methods of a tty.WriteStream (the spinner moves the cursor), which write the
 * same escape sequences through the pipe.
 */
function seeAs(stream: NodeJS.WriteStream, as: TerminalStream): void {
  if (!as.isTTY) return;
  const tty = WriteStream.prototype;
  Object.assign(stream, {
    isTTY: true,
    columns: as.columns,
    rows: as.rows,
    cursorTo: (x: number, y?: number, cb?: () => void) => cursorTo(stream, x, y, cb),
    moveCursor: (dx: number, dy: number, cb?: () => void) => moveCursor(stream, dx, dy, cb),
    clearLine: (dir: -1 | 0 | 1, cb?: () => void) => clearLine(stream, dir, cb),
    clearScreenDown: (cb?: () => void) => clearScreenDown(stream, cb),
    getWindowSize: () => [stream.columns ?? 80, stream.rows ?? 24],
    getColorDepth: tty.getColorDepth.bind(stream),
    hasColors: tty.hasColors.bind(stream),
  });
}
seeAs(process.stdout, terminal.stdout);
seeAs(process.stderr, terminal.stderr);
Object.assign(process.stdin, { isTTY: terminal.stdinIsTTY });

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

parentPort?.on('message', (m: ToWorker) => {
  if (m.t === 'resize') {
    // As a tty.WriteStream does on SIGWINCH: the new size, then 'resize' (ora reads the width
    // at each redraw).
    const stream = process[m.stream];
    Object.assign(stream, { columns: m.columns, rows: m.rows });
    stream.emit('resize');
    return;
  }
  if (m.t === 'signal') {
    // With nobody listening, a signal ends the process, as it would without a worker.
    if (process.listenerCount(m.name) === 0) process.exit(SIGNAL_EXIT[m.name]);
    process.emit(m.name, m.name);
    return;
  }
  const err: NodeJS.ErrnoException = new Error(m.message);
  if (m.code) err.code = m.code;
  process.stdout.emit('error', err);
});
// The port must not keep the worker alive once the CLI is done.
parentPort?.unref();

if (argv.includes('--debug') || process.env.ENRICH_DEBUG === '1') {
  const mb = WORKER_YOUNG_GENERATION_MB;
  process.stderr.write(`debug: bulk run in a worker thread (young generation ${mb} MB)\n`);
}
process.exitCode = await main(argv);
