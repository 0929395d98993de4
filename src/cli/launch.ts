/**
 * How the CLI starts. A bulk run (`contacts`, `companies`, `verify-emails`) on Node 24 or later
 * runs in a worker thread whose young generation is limited to what Node 20 gives: Node 24's
 * V8 lets it grow to 64 MB and a run's own memory to about 240 MB at 100k rows, and V8 reads
 * that size only when it starts (`--max-semi-space-size` in NODE_OPTIONS, or a worker's
 * `resourceLimits`; BENCHMARKS.md, session 14). Everything else runs in the main thread, as
 * before. In the worker, the CLI sees the terminal as the process does (worker-entry.ts): the
 * main thread hands it Ctrl-C, SIGTERM, stdin, the errors of its standard output and the
 * terminal's new size when it is resized.
 */
import type { Worker } from 'node:worker_threads';
import { ExitCode } from '../errors.js';

/** The young generation of a bulk run's worker: two semi-spaces of 16 MB, Node 20's default. */
export const WORKER_YOUNG_GENERATION_MB = 48;

const BULK_COMMANDS = new Set(['contacts', 'companies', 'verify-emails']);

/** What the worker is told of the terminal (a worker's stdio are pipes to the main thread). */
export interface Terminal {
  stdout: TerminalStream;
  stderr: TerminalStream;
  stdinIsTTY: boolean;
}

/** A terminal's stream as the worker is told of it. */
export interface TerminalStream {
  isTTY: boolean;
  columns?: number;
  rows?: number;
}

const terminalOf = (s: NodeJS.WriteStream): TerminalStream => ({
  isTTY: s.isTTY === true,
  ...(s.isTTY === true ? { columns: s.columns, rows: s.rows } : {}),
});

/** The messages the main thread sends the worker. */
export type ToWorker =
  | { t: 'signal'; name: 'SIGINT' | 'SIGTERM' }
  | { t: 'stdout-error'; code?: string; message: string }
  | { t: 'resize'; stream: 'stdout' | 'stderr'; columns: number; rows: number };

/**
 * True when `argv` (process.argv form) is a bulk run to start in a worker: Node 24 or later
 * (`ENRICH_WORKER=1` asks for it on any version, `=0` never), no young-generation size set
 * by the user, and a bulk command without --help or --version.
 */
export function runsInWorker(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  nodeMajor = Number(process.versions.node.split('.')[0]),
  execArgv: readonly string[] = process.execArgv,
): boolean {
  if (env.ENRICH_WORKER === '0') return false;
  const args = argv.slice(2);
  if (!args.some((a) => BULK_COMMANDS.has(a))) return false;
  if (args.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V'))
    return false;
  if (env.ENRICH_WORKER === '1') return true;
  const sized = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some((o) =>
    /^--max-semi-space-size\b/.test(o),
  );
  return nodeMajor >= 24 && !sized;
}

/** Runs the CLI with `argv` and resolves to its exit code: in a worker for a bulk run (above). */
export async function launch(argv: string[]): Promise<number> {
  // stderr is talk (progress, warnings, the summary): a reader of it that goes away
  // (`enrich contacts in.csv -o out.csv 2>&1 | head -1`) must not end a run half-way, as an
  // internal error, with its output unwritten. What it would have said is lost; the run goes
  // on, and its exit code still says how it went.
  process.stderr.on('error', () => undefined);
  if (!runsInWorker(argv)) {
    const { main } = await import('./main.js');
    return main(argv);
  }
  const [{ Worker }, { isatty }] = await Promise.all([
    import('node:worker_threads'),
    import('node:tty'),
  ]);
  // Input "-" is stdin: the main thread reads it for the worker (not a terminal: the CLI
  // refuses to wait for typing, and must be told it is one).
  // (isatty(0) rather than process.stdin, which would open a stream on fd 0 for nothing.)
  const stdinIsTTY = isatty(0);
  const pipeStdin = argv.slice(2).includes('-') && !stdinIsTTY;
  const terminal: Terminal = {
    stdout: terminalOf(process.stdout),
    stderr: terminalOf(process.stderr),
    stdinIsTTY,
  };
  const worker = new Worker(new URL('./worker-entry.js', import.meta.url), {
    workerData: { argv, terminal },
    // The worker's process.argv as the process's (the resume command a run prints is made of it).
    argv: argv.slice(2),
    stdin: pipeStdin,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  if (pipeStdin && worker.stdin) process.stdin.pipe(worker.stdin);
  return relay(worker, pipeStdin);
}

/** Hands the worker the process's signals and stdout errors until it ends; resolves to its exit code. */
function relay(worker: Worker, pipedStdin: boolean): Promise<number> {
  const send = (m: ToWorker) => worker.postMessage(m);
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => send({ t: 'signal', name });
  const onInt = () => onSignal('SIGINT');
  const onTerm = () => onSignal('SIGTERM');
  // A reader that went away (EPIPE) or a full disk behind `> file`: the CLI in the worker
  // decides what it means for the run (main.ts), as it does in the main thread.
  let stdoutFailed = false;
  const onStdoutError = (err: NodeJS.ErrnoException) => {
    if (stdoutFailed) return;
    stdoutFailed = true;
    send({ t: 'stdout-error', ...(err.code ? { code: err.code } : {}), message: err.message });
  };
  // A terminal made narrower mid-run: the spinner must know, or each redraw that now wraps
  // clears only its last line and leaves the others on the screen (the worker's streams are
  // pipes, sized once at start).
  const resizers = (['stdout', 'stderr'] as const).map((name) => {
    const stream = process[name];
    const onResize = () =>
      send({ t: 'resize', stream: name, columns: stream.columns, rows: stream.rows });
    stream.on('resize', onResize);
    return () => stream.off('resize', onResize);
  });
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  // Kept after the worker ends: what it wrote last may still be on its way to stdout.
  process.stdout.on('error', onStdoutError);
  return new Promise<number>((resolve) => {
    let failure: Error | undefined;
    worker.on('error', (err) => {
      failure = err;
    });
    worker.on('exit', (code) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      for (const off of resizers) off();
      if (pipedStdin) {
        process.stdin.unpipe();
        process.stdin.pause();
      }
      if (failure) {
        // An error nothing in the worker caught: what main() says of one (INTERNAL, exit 1).
        process.stderr.write(`enrich: internal error: ${failure.message}\n`);
        resolve(code === 0 ? ExitCode.internal : code);
        return;
      }
      resolve(code);
    });
  });
}
