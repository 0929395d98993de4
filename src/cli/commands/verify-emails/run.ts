import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  VerifyEmailsOptions,
  VerifyProgress,
  VerifySummary,
} from '../../../bulk/verify-emails.js';
import { resolveSettings, type ResolvedSettings } from '../../../config/settings.js';
import { EnrichError, ErrorCodes } from '../../../errors.js';
import { formatOfExtension, type FileFormat } from '../../../io/file-format.js';
import { openService, type Service } from '../../context.js';
import type { GlobalOptions } from '../../globals.js';
import {
  OUTPUT_CLOSED_LINE,
  printable,
  stopsOnClosedStdout,
  warnAbout,
  warningLine,
} from '../../output.js';
import { createProgress, rowsMayShow, type ProgressView } from '../../progress.js';
import { verifyText } from '../../progress-text.js';
import { exitOnInterrupt } from '../bulk/run.js';
import { interruptedText, interruptOnSignal } from '../../interrupt.js';
import { resumeCommand } from '../bulk/resolve.js';
import { readOptionsOf, settingFlagsOf, VERIFY_WORDS, verifyOptionsOf } from './flags.js';
import { budgetReached } from '../../../pipeline/run/messages.js';
import { verifyPlanJson, verifyPlanText, verifySummaryJson, verifySummaryText } from './report.js';

type Raw = Record<string, unknown>;

/**
 * The run's progress on stderr, as the bulk commands show theirs (progress.ts): a spinner on
 * a terminal, plain lines elsewhere, nothing with --quiet or --no-progress (and then the run
 * is not asked for reports, nor counts its rows for them).
 */
async function progressOf(
  globals: GlobalOptions,
  output: string,
): Promise<{
  view: ProgressView<VerifyProgress>;
  onProgress: ((p: VerifyProgress) => void) | undefined;
}> {
  const view = await createProgress({
    quiet: globals.quiet,
    enabled: globals.progress,
    color: globals.color,
    line: verifyText(),
    rowsMayShow: rowsMayShow(output),
  });
  const shown = !globals.quiet && globals.progress;
  return { view, onProgress: shown ? (p) => view.update(p) : undefined };
}

/** The library's options from the flags and settings. */
function optionsOf(
  input: string,
  raw: Raw,
  settings: ResolvedSettings,
  command: string,
): VerifyEmailsOptions {
  return {
    ...verifyOptionsOf(raw),
    input,
    read: readOptionsOf(raw),
    timeoutMs: settings.timeoutMs,
    maxAgeMs: settings.cacheMaxAgeMs,
    formulaEscape: settings.formulaEscape,
    runRetentionMs: settings.runRetentionMs,
    command,
    onWarning: (w) => warnAbout([w]),
  };
}

/** `enrich verify-emails <input> --dry-run`: the column, the addresses and the worst case; nothing sent. */
async function dryRun(
  opts: VerifyEmailsOptions,
  settings: ResolvedSettings,
  globals: GlobalOptions,
) {
  const { verifyEmailsFile } = await import('../../../bulk/verify-emails.js');
  const { accountOfKey } = await import('../../../api/account.js');
  // The cache is per account and service: known only with a key and a base URL (never --sandbox).
  const known = !globals.sandbox && settings.apiKey && settings.baseUrl;
  const service = known
    ? {
        api: {
          verify: () => Promise.reject(new EnrichError('INTERNAL', 'a dry run sends nothing')),
        },
        baseUrl: settings.baseUrl!,
        account: accountOfKey(settings.apiKey!),
      }
    : undefined;
  const plan = await verifyEmailsFile({ ...opts, dryRun: true, ...(service ? { service } : {}) });
  process.stdout.write(
    globals.json
      ? `${JSON.stringify(verifyPlanJson(plan), null, 2)}\n`
      : `${verifyPlanText(plan, opts.maxCredits)}\n`,
  );
  return 0;
}

/**
 * Refuses --json when the verified rows go to stdout, as the bulk commands do: the summary it
 * asks for would have nowhere to go, and a program that asked for JSON would get CSV rows
 * without a word. Refused before anything is read or sent.
 */
function checkJsonTarget(opts: VerifyEmailsOptions, globals: GlobalOptions): void {
  if (!globals.json || opts.output !== '-') return;
  throw new EnrichError(
    'USAGE',
    '--json prints the run summary on stdout, where the verified rows go without -o',
    {
      hint: 'Write the rows to a file with -o verified.csv (the summary then goes to stdout), or drop --json (--format json writes the rows themselves as JSON).',
    },
  );
}

/** `enrich verify-emails <input>`: verify, write, summarise; the exit code says how it ended. */
export async function runVerifyEmails(
  input: string,
  raw: Raw,
  globals: GlobalOptions,
): Promise<number> {
  const started = Date.now();
  const command = resumeCommand(process.argv.slice(2));
  const settings = resolveSettings({ globals, flags: settingFlagsOf(raw) });
  const opts = optionsOf(input, raw, settings, command);
  if (raw.dryRun === true) return dryRun(opts, settings, globals);
  checkJsonTarget(opts, globals);
  // --sandbox runs are throw-away: their journal lives in a temp dir, removed afterwards.
  const scratch = globals.sandbox
    ? await mkdtemp(join(tmpdir(), 'enrich-sandbox-run-'))
    : undefined;
  const quit = interruptedText(command, globals.sandbox);
  const interrupt = interruptOnSignal(
    'no new addresses will be sent; those already sent get their answer',
    quit,
  );
  if (opts.output === '-') process.exitCode = ErrorCodes.OUTPUT_CLOSED;
  let service: Service | undefined;
  const progress = await progressOf(globals, opts.output);
  const note = (line: string) => progress.view.note(line);
  try {
    const { verifyEmailsFile, toVerifyApi } = await import('../../../bulk/verify-emails.js');
    const concurrency = opts.concurrency ?? 8;
    const connections = Math.max(8, concurrency);
    const svc = await openService(globals, {
      settings,
      connections,
      talk: note,
      timeoutFlag: '--timeout',
    });
    service = svc;
    const deadline = Date.now() + settings.timeoutMs;
    const verify = () =>
      verifyEmailsFile({
        ...opts,
        ...(scratch ? { runsDir: scratch } : {}),
        service: {
          api: toVerifyApi(svc.client, deadline),
          baseUrl: svc.baseUrl,
          // Each embedded sandbox is a new account: its verdicts are neither read nor kept.
          ...(svc.sandbox ? {} : { account: svc.client.account }),
        },
        signal: interrupt.signal,
        onProgress: progress.onProgress,
        onWarning: (w) => note(warningLine(w)),
      });
    // Rows go to stdout as they are settled: a reader that goes away (`| head`) fails the next
    // write, and the run stops sending, waits for the answers in flight (journaled) and fails
    // with OUTPUT_CLOSED, rather than being ended at once by main.ts.
    const summary = await (opts.output === '-' ? stopsOnClosedStdout(verify) : verify());
    progress.view.stop();
    return report(withLastKnownBalance(summary, svc), opts, globals, Date.now() - started, command);
  } catch (err) {
    progress.view.stop();
    if (opts.output === '-' && err instanceof EnrichError && err.code === 'OUTPUT_CLOSED') {
      // As main.ts says it for the other runs writing to stdout (exit 2, never 0), and how to
      // get the answers it had (not with --sandbox, whose service ends with the run).
      process.stderr.write(OUTPUT_CLOSED_LINE);
      if (!globals.sandbox) process.stderr.write(closedVerifyNote(command, input, opts.format));
      return ErrorCodes.OUTPUT_CLOSED;
    }
    return exitOnInterrupt(err, quit);
  } finally {
    process.exitCode = undefined;
    await service?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
    // Last: a Ctrl-C while the service closes still leaves with 130, never killed.
    interrupt.dispose();
  }
}

/**
 * What `verify-emails` writing to stdout says when its reader went away: the same command
 * writing to a file (of the format stdout had: the input's, CSV for a workbook) resumes it.
 */
export function closedVerifyNote(command: string, input: string, format?: FileFormat): string {
  const own = formatOfExtension(input);
  const ext = format ?? (own === undefined || own === 'xlsx' ? 'csv' : own);
  return `enrich: the answers it had are kept (the journal, the results cache): the same command writing to a file writes them without verifying them again:\n  ${command} -o verified.${ext}\n`;
}

/**
 * A run that asked the service nothing (every address from the results cache or an earlier
 * attempt's journal) has no figure of its own: `remaining` is then the last verification
 * balance the service reported for this account (what `enrich auth status` shows as
 * `remaining_verification_credits`), never the enrichment balance, a separate one.
 */
function withLastKnownBalance(s: VerifySummary, service: Pick<Service, 'lastKnownCredits'>) {
  if (s.remainingCredits !== null) return s;
  const known = service.lastKnownCredits?.()?.remaining_verification_credits;
  return known === undefined ? s : { ...s, remainingCredits: known };
}

function report(
  s: VerifySummary,
  opts: VerifyEmailsOptions,
  globals: GlobalOptions,
  elapsedMs: number,
  command: string,
): number {
  if (!globals.quiet) process.stderr.write(`${verifySummaryText(s, elapsedMs)}\n`);
  else if (s.stopReason)
    process.stderr.write(
      `enrich: stopped early: ${printable(s.stopReason.message)} [${s.stopReason.code}]\n`,
    );
  if (globals.json)
    process.stdout.write(`${JSON.stringify(verifySummaryJson(s, elapsedMs), null, 2)}\n`);
  const left = s.notSent + s.failed;
  // --max-credits reached needs no top-up: the next run sends the next addresses.
  const budget = s.stopReason?.message === budgetReached(VERIFY_WORDS, opts.maxCredits);
  const topUp = s.exitCode === 5 && !budget ? 'after a top-up, ' : '';
  if (left > 0)
    process.stderr.write(
      `enrich: ${left} address(es) not verified; ${topUp}run the same command again to verify only those:\n  ${command}\n`,
    );
  if (s.unconfirmed > 0)
    process.stderr.write(
      `enrich: ${s.unconfirmed} address(es) were sent and their answer lost: the service may have charged them, so they are not sent again by themselves. To send them again (which may charge them twice):\n  ${command} --resend-unconfirmed\n`,
    );
  return s.exitCode;
}
