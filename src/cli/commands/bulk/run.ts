import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { toBulkApi } from '../../../api/bulk-api.js';
import { sleep } from '../../../bulk/enrich-file.js';
import { EnrichError, ErrorCodes } from '../../../errors.js';
import { resumeBy } from '../../../pipeline/run/poll.js';
import { runBulk, type RunSummary } from '../../../pipeline/run/run.js';
import type { RunCache } from '../../../bulk/run-cache.js';
import type { BulkKind, JobEvent, ResolvedRun } from '../../../pipeline/types.js';
import { openService, type Service } from '../../context.js';
import type { GlobalOptions } from '../../globals.js';
import { interruptedText, interruptOnSignal } from '../../interrupt.js';
import { noteOnClosedStdout, printable, warningLine } from '../../output.js';
import { createProgress, rowsMayShow, type ProgressView } from '../../progress.js';
import { jobLine } from '../../progress-text.js';
import type { BulkOptions } from './options.js';
import { closedOutputNote, resumeHints, summaryJson, summaryText } from './report.js';
import { openBulkRun, resumeCommand } from './resolve.js';

/** Refuses --no-wait with --sandbox: the embedded sandbox's jobs could never be fetched later. */
function checkNoWait(options: BulkOptions, globals: GlobalOptions): void {
  if (!globals.sandbox || options.wait) return;
  // Each --sandbox run starts a new sandbox on a new port (a new service, so a new run).
  throw new EnrichError(
    'USAGE',
    '--no-wait cannot be used with --sandbox: the embedded sandbox stops with this command, so its jobs could never be fetched',
    {
      hint: 'Drop --no-wait, or start a sandbox with `enrich sandbox` and point ENRICH_BASE_URL at it.',
    },
  );
}

/**
 * Refuses --json when the data itself goes to stdout: the summary object and the rows would
 * be mixed in one stream, and a program that asked for JSON would get CSV. Refused before
 * anything is read or sent, rather than moving the summary to stderr, where a program that
 * reads stdout for it would never look.
 */
function checkJsonTarget(options: BulkOptions, globals: GlobalOptions): void {
  if (!globals.json || options.output) return;
  throw new EnrichError(
    'USAGE',
    '--json prints the run summary on stdout, where the enriched rows go without -o',
    {
      hint: 'Write the rows to a file with -o enriched.csv (the summary then goes to stdout), or drop --json (--format json writes the rows themselves as JSON).',
    },
  );
}

/** An interrupted run (Ctrl-C, SIGTERM) says `quit` (how to resume) and ends 130; any other error goes on. */
export function exitOnInterrupt(err: unknown, quit: string): number {
  if (!(err instanceof EnrichError && err.code === 'INTERRUPTED')) throw err;
  process.stderr.write(quit);
  return 130;
}

/**
 * A run that asked the service nothing (every row from the results cache, or an earlier run's
 * downloads) has no figure of its own: `remaining` is then the last one the service reported
 * for this account (what `enrich auth status` shows), with `remaining_credits_at` null.
 */
function withLastKnownBalance(summary: RunSummary, service: Pick<Service, 'lastKnownCredits'>) {
  if (summary.remainingCredits !== null) return summary;
  const known = service.lastKnownCredits?.()?.remaining_credits;
  return known === undefined ? summary : { ...summary, remainingCredits: known };
}

/** `enrich contacts|companies <input>` without --dry-run: the whole bulk run, printed. */
export async function runBulkCommand(
  kind: BulkKind,
  input: string,
  options: BulkOptions,
  globals: GlobalOptions,
): Promise<number> {
  checkNoWait(options, globals);
  checkJsonTarget(options, globals);
  const started = Date.now();
  const command = resumeCommand(process.argv.slice(2));
  // --sandbox runs are throw-away: their journal lives in a temp dir, removed afterwards.
  const scratch = globals.sandbox
    ? await mkdtemp(join(tmpdir(), 'enrich-sandbox-run-'))
    : undefined;
  const quit = interruptedText(command, globals.sandbox);
  const interrupt = interruptOnSignal(
    'no new jobs will be submitted; those already sent get their answer',
    quit,
  );
  // Data on stdout: a reader that goes away before the end is a failure (see main.ts).
  if (!options.output) process.exitCode = ErrorCodes.OUTPUT_CLOSED;
  let opened: Awaited<ReturnType<typeof openBulkRun>> | undefined;
  let service: Awaited<ReturnType<typeof openService>> | undefined;
  let cache: RunCache | undefined;
  const progress = await createProgress({
    quiet: globals.quiet,
    enabled: globals.progress,
    color: globals.color,
    // Rows on stdout (no -o, or --rejects -) may show between the spinner's redraws.
    rowsMayShow:
      rowsMayShow(options.output) ||
      (options.rejects !== undefined && rowsMayShow(options.rejects)),
  });
  try {
    // The run is resolved (mapping, output, options) before the service is needed (a key,
    // or the embedded sandbox): a wrong column is a usage error even without a key.
    opened = await openBulkRun(kind, input, options, globals, {
      runsDir: scratch,
      command,
      onWarning: (w) => progress.note(warningLine(w)),
    });
    const onJob = watchClosedStdout(opened.run, globals, command, progress);
    service = await openService(globals, {
      settings: opened.settings,
      talk: (line) => progress.note(line),
      timeoutFlag: '--timeout',
    });
    boundHeapGrowth();
    cache = await openCliRunCache(opened.run, service, globals, (w) =>
      progress.note(warningLine(w)),
    );
    const summary = await runBulk(opened.run, {
      cache: cache?.cache,
      // The run's deadline bounds every wait of the client too (a Retry-After, a rate limit).
      api: toBulkApi(service.client, { deadline: Date.now() + opened.run.timeoutMs }),
      baseUrl: service.baseUrl,
      account: service.client.account,
      env: { now: Date.now, sleep, random: Math.random, signal: interrupt.signal },
      onProgress: (p) => progress.update(p),
      onJob,
      onWarning: (w) => progress.note(warningLine(w)),
      onServiceBound: tightenHeapGrowth,
    });
    progress.stop();
    return report(
      withLastKnownBalance(summary, service),
      options,
      globals,
      Date.now() - started,
      command,
      opened.run.output.prefix,
      kind,
    );
  } catch (err) {
    progress.stop();
    return exitOnInterrupt(err, quit);
  } finally {
    process.exitCode = undefined;
    noteOnClosedStdout(undefined);
    await cache?.close();
    await service?.close();
    await opened?.source.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
    // Last: a Ctrl-C while the cache and service close still leaves with 130, never killed.
    interrupt.dispose();
  }
}

/**
 * The run's job events: shown with -v, and counted for a run writing to stdout, to tell a
 * reader that goes away (`| head`) what the service accepted, and how to get it; not with
 * --sandbox, whose journal and service end with the process.
 */
function watchClosedStdout(
  run: ResolvedRun,
  globals: GlobalOptions,
  command: string,
  progress: ProgressView,
): (e: JobEvent) => void {
  let accepted = 0;
  if (run.output.target === '-' && !globals.sandbox)
    noteOnClosedStdout(() => closedOutputNote(accepted, command, run.output.format));
  const verbose = globals.verbose && !globals.quiet;
  return (e) => {
    if (e.t === 'submitted') accepted++;
    if (verbose) noteJob(progress, e);
  };
}

/** `-v`: a line per job submitted, done or sent again, above the spinner. */
function noteJob(progress: ProgressView, e: JobEvent): void {
  const line = jobLine(e);
  if (line) progress.note(line);
}

/**
 * The results cache of a CLI run. Not with --sandbox: each embedded sandbox is a new account
 * (a new key), whose answers no later run could ever use.
 */
async function openCliRunCache(
  run: ResolvedRun,
  service: { baseUrl: string; client: { account: string } },
  globals: GlobalOptions,
  onWarning: (message: string) => void,
): Promise<RunCache | undefined> {
  if (globals.sandbox) return undefined;
  const { openRunCache, pruneOldRuns } = await import('../../../bulk/run-cache.js');
  await pruneOldRuns(run);
  return openRunCache(run, {
    baseUrl: service.baseUrl,
    account: service.client.account,
    onWarning,
  });
}

function report(
  s: RunSummary,
  options: BulkOptions,
  globals: GlobalOptions,
  elapsedMs: number,
  command: string,
  prefix: string,
  kind: BulkKind,
): number {
  const by = resumeBy(s.jobs.pendingExpire, Date.now(), "the first job's results");
  if (!s.written) {
    // --no-wait with jobs still running: say which, how to finish, and by when.
    if (globals.json) {
      process.stdout.write(
        `${JSON.stringify({ jobs: s.jobs.ids, pending: s.jobs.pending, done: s.jobs.spooled, resume: command, resume_before: isoOrNull(s.jobs.pendingExpire) }, null, 2)}\n`,
      );
    } else {
      process.stdout.write(s.jobs.ids.map((id) => `${id}\n`).join(''));
      if (!globals.quiet) {
        process.stderr.write(
          `enrich: ${s.jobs.pending} job(s) submitted and still running; to fetch the results, run the same command again${by}:\n  ${command}\n`,
        );
      }
    }
    return 0;
  }
  if (!globals.quiet) process.stderr.write(`${summaryText(s, elapsedMs, prefix)}\n`);
  // --quiet silences progress and the summary, never why a run failed: in cron, stderr is
  // the only place that says it (the summary above already has this line).
  else if (s.stopReason)
    process.stderr.write(
      `enrich: stopped early: ${printable(s.stopReason.message)} [${s.stopReason.code}]\n`,
    );
  // Rows a job's answer left out were sent and may have been charged: a warning, which
  // --quiet still prints (the summary above says it already otherwise).
  if (globals.quiet && s.statuses.missing > 0)
    process.stderr.write(
      `${warningLine(`${s.statuses.missing} row(s) were left out of their job's answer ("missing"): sent, no data came back, and they may have been charged`)}\n`,
    );
  if (globals.json && options.output)
    process.stdout.write(`${JSON.stringify(summaryJson(s, elapsedMs), null, 2)}\n`);
  // --quiet never hides how to pick a run up that stopped early.
  process.stderr.write(resumeHints(s, command, by, options.maxCredits, kind));
  return s.exitCode;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A bulk run makes a few KB of short-lived objects per row (parsed results, cells), and
 * by default V8 lets the old heap fill with ~150 MB of that garbage between full GCs
 * (anonymous memory 175-215 MB at 100k rows; live data stays ~25-50 MB). Growing the heap
 * by 75% steps instead keeps it at ~125 MB at 100k rows and ~165 MB at 1M; 50% steps
 * (the earlier choice) cost 10-15% more client CPU at 100k for ~5 MB less, 100% saved
 * little more CPU for ~20 MB more (BENCHMARKS.md, session 9). A GC tuning flag, read at
 * each full GC: this CLI process only, never from the library.
 */
function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=75');
}

/**
 * Once the run waits for the service (a slow job held the reader a second), its CPU is spare:
 * 30% steps keep the heap closer to its live data, at the cost of more full GCs nobody waits
 * for. 100k rows against jobs of 5 ms a record: anonymous peak 199-217 -> 179-186 MB, the
 * same wall time (BENCHMARKS.md, session 11). A CLI process setting only, like the one above.
 */
function tightenHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=30');
}
