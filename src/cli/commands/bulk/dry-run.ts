import type { InputSource } from '../../../io/read.js';
import type { Plan, PlanResume, ResumePlan } from '../../../pipeline/run/plan.js';
import type { ResolvedSettings } from '../../../config/settings.js';
import type { BulkKind, ResolvedRun, ResultsCache } from '../../../pipeline/types.js';
import type { BulkOptions } from './options.js';
import type { GlobalOptions } from '../../globals.js';

/**
 * The `--dry-run --json` object of DESIGN.md section 4, with `cached`, `sent` and
 * `over_budget` (rows --max-credits leaves unsent) besides.
 */
export function planJson(plan: Plan): Record<string, unknown> {
  return {
    mapping: plan.names,
    rows: plan.rows,
    valid: plan.valid,
    invalid: plan.invalid,
    duplicates: plan.duplicates,
    cached: plan.cached,
    unconfirmed_earlier: plan.unconfirmed_earlier,
    earlier_jobs: plan.earlier_jobs,
    sent: plan.sent,
    over_budget: plan.over_budget,
    batches: plan.batches,
    max_credits: plan.max_credits,
    ...(plan.resume ? { resume: resumeJson(plan.resume) } : {}),
  };
}

/** The `resume` member: the unfinished run the real run would resume, and its rows' fates. */
function resumeJson(r: ResumePlan): Record<string, unknown> {
  return {
    started_at: new Date(r.startedAt).toISOString(),
    finished: r.finished,
    answered: r.answered,
    in_jobs: r.inJobs,
    unconfirmed: r.unconfirmed,
    expired: r.expired,
    resent: r.resent,
  };
}

/**
 * The rows sent by an enrich run with no answer (by the resumed run's journal, or marked in
 * the results cache by any run): not sent again by themselves. None: no line.
 */
function unconfirmedLine(plan: Plan, resend: string): [string, string][] {
  const rows = (plan.resume?.unconfirmed ?? 0) + plan.unconfirmed_earlier;
  if (rows === 0) return [];
  return [
    [
      'unconfirmed',
      `${rows} (sent by an enrich run that never got their answer: they may have been charged; not sent again, they end "failed", exit 3; ${resend} sends them)`,
    ],
  ];
}

/** Rows in jobs earlier runs left not downloaded (none: no line). */
function earlierJobsLine(plan: Plan): [string, string][] {
  if (plan.earlier_jobs === 0) return [];
  return [
    [
      'earlier_jobs',
      `${plan.earlier_jobs} (in jobs earlier runs of other files left not downloaded: downloaded first, not paid again, while the service keeps them)`,
    ],
  ];
}

/** The plan's lines for a resume: the run resumed, then each fate its rows have (none: not shown). */
function resumeLines(r: ResumePlan): [string, string][] {
  const started = new Date(r.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const lines: [string, string][] = [
    [
      'resumes',
      `the ${r.finished ? '' : 'unfinished '}run of this file started ${started} (its journal)`,
    ],
  ];
  if (r.answered) lines.push(['answered', `${r.answered} (kept in its journal: not sent again)`]);
  if (r.inJobs)
    lines.push([
      'in_jobs',
      `${r.inJobs} (in jobs the service accepted: downloaded, not paid again)`,
    ]);
  if (r.expired)
    lines.push([
      'expired',
      `${r.expired} (their jobs' results expired before they were downloaded: they end "expired", exit 3)`,
    ]);
  return lines;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Cell text as the table shows it: line breaks, tabs and other control characters (a
 * terminal escape sequence, for one) written as escapes, so a cell can neither break the
 * table's lines nor drive the user's terminal.
 */
export function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    return ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** The mapping as a table: field, column, sample values (for stderr). */
export function formatMappingTable(plan: Plan, source: InputSource): string {
  const rows: [string, string, string][] = [['field', 'column', 'sample values']];
  const split = plan.mapping.split ? source.header[plan.mapping.split.column] : undefined;
  for (const [field, column] of Object.entries(plan.names)) {
    const samples = (plan.samples[field as keyof Plan['samples']] ?? [])
      .map((s) => clip(printable(s), 40))
      .join(' | ');
    const label =
      split !== undefined && column === split && (field === 'first_name' || field === 'last_name')
        ? `${column} (split)`
        : column;
    rows.push([field, printable(label), samples]);
  }
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  const unused = source.header.filter((h) => !Object.values(plan.names).includes(h));
  const lines = rows.map(([a, b, c]) => `  ${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`.trimEnd());
  const where =
    source.format === 'json' || source.format === 'jsonl'
      ? source.format.toUpperCase()
      : describeDialect(source);
  return [
    `Mapping for ${source.name} (${where}):`,
    ...lines,
    unused.length ? `  not sent: ${unused.map((u) => `"${printable(u)}"`).join(', ')}` : '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

function describeDialect(source: InputSource): string {
  const d = source.dialect;
  if (source.format === 'xlsx') return `XLSX workbook, header on row ${d.headerLine}`;
  const names: Record<string, string> = {
    ',': 'comma',
    ';': 'semicolon',
    '\t': 'tab',
    '|': 'pipe',
  };
  const parts = [
    `${names[d.delimiter ?? ','] ?? JSON.stringify(d.delimiter)}-separated`,
    d.encoding + (d.bom ? ' with BOM' : ''),
  ];
  if (d.headerLine > 1) parts.push(`header on line ${d.headerLine}`);
  return parts.join(', ');
}

/** The plan as aligned lines (for stdout); with --max-credits, what the run sends within it. */
export function formatPlan(
  plan: Plan,
  options: BulkOptions,
  run: Pick<ResolvedRun, 'batchSize' | 'maxCredits' | 'words'>,
): string {
  const cap = run.maxCredits === undefined ? undefined : `--max-credits ${run.maxCredits}`;
  const lines: [string, string][] = [
    ['rows', String(plan.rows)],
    ['valid', String(plan.valid)],
    ['invalid', String(plan.invalid) + (options.rejects ? ` (written to ${options.rejects})` : '')],
    ['duplicates', String(plan.duplicates) + (options.dedupe ? ' (sent once)' : '')],
    ['cached', `${plan.cached} (answered from the results cache, not sent)`],
    ...earlierJobsLine(plan),
    ...(plan.resume ? resumeLines(plan.resume) : []),
    ...unconfirmedLine(plan, run.words.option('resendUnconfirmed')),
    [
      'sent',
      String(plan.sent) +
        (cap ? ` (within ${cap})` : '') +
        (plan.resume?.resent
          ? ` (${plan.resume.resent} of them sent again: no answer of theirs is kept)`
          : ''),
    ],
  ];
  if (cap)
    lines.push([
      'over_budget',
      `${plan.over_budget} (not sent: past ${cap}; they end "failed"${plan.over_budget > 0 ? ', exit 5' : ''})`,
    ]);
  lines.push(
    ['batches', `${plan.batches} (batch size ${run.batchSize})`],
    ['max_credits', `${plan.max_credits} (at most, for the rows sent)`],
  );
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** `enrich contacts|companies <input> --dry-run`: read, map, validate, dedupe and count; send nothing. */
export async function runDryRun(
  kind: BulkKind,
  input: string,
  options: BulkOptions,
  globals: GlobalOptions,
): Promise<number> {
  const [{ openBulkRun }, { planBulk }] = await Promise.all([
    import('./resolve.js'),
    import('../../../pipeline/run/plan.js'),
  ]);
  const { source, run, settings } = await openBulkRun(kind, input, options, globals);
  const cache = await planCache(run, settings, globals);
  try {
    const resume = await resumeOf(run, settings, globals, cache !== undefined);
    const earlier = cache && (await earlierView(run, settings, cache.cache));
    const plan = await planBulk(run, {
      ...(earlier ? { cache: earlier.cache, inEarlierJob: earlier.inJob } : {}),
      ...(resume ? { resume } : {}),
    });
    if (!globals.quiet) process.stderr.write(`${formatMappingTable(plan, source)}\n`);
    if (plan.over_budget > 0 && !globals.quiet) {
      process.stderr.write(
        `note: --max-credits ${run.maxCredits} leaves ${plan.over_budget} row(s) unsent: the run would stop there (exit 5), and the same command run again sends the next ones\n`,
      );
    }
    if (globals.json) process.stdout.write(`${JSON.stringify(planJson(plan), null, 2)}\n`);
    else process.stdout.write(`${formatPlan(plan, options, run)}\n`);
    return 0;
  } finally {
    await cache?.close();
    await source.close();
  }
}

/**
 * The results cache a run with these settings would read: known only with a key and a base
 * URL (the cache is per account and service); never with --sandbox, a new account each time.
 */
async function planCache(run: ResolvedRun, settings: ResolvedSettings, globals: GlobalOptions) {
  if (globals.sandbox || !settings.apiKey || !settings.baseUrl) return undefined;
  const [{ openRunCache }, { accountOfKey }] = await Promise.all([
    import('../../../bulk/run-cache.js'),
    import('../../../api/account.js'),
  ]);
  return openRunCache(run, {
    baseUrl: settings.baseUrl,
    account: accountOfKey(settings.apiKey),
    onWarning: (w) => {
      if (!globals.quiet) process.stderr.write(`enrich: warning: ${w}\n`);
    },
  });
}

/**
 * The cache as the run reads it once its start settled what earlier runs of other files (or of
 * this file before it changed) left: their jobs not downloaded, their batches sent with no
 * answer (earlier-left.ts). Only for a run that reads and writes the cache, as the run settles
 * them only then.
 */
async function earlierView(run: ResolvedRun, settings: ResolvedSettings, cache: ResultsCache) {
  if (!run.cache.read || !run.cache.write) return { cache, inJob: () => false };
  const [{ accountOfKey }, { runKeyOf }, { earlierLeft, withEarlierLeft }] = await Promise.all([
    import('../../../api/account.js'),
    import('../../../pipeline/run/run.js'),
    import('../../../pipeline/run/earlier-left.js'),
  ]);
  const input = await run.source.identity();
  const id = runKeyOf(run, input, settings.baseUrl!, accountOfKey(settings.apiKey!));
  const now = Date.now();
  const left = await earlierLeft({ runsDir: run.runsDir, kind: run.kind, input, now, ...id });
  return withEarlierLeft(cache, left, now);
}

/**
 * The unfinished run this command would resume (the same file, options, service and account),
 * read from its journal without its lock, with what its resume may send again: known only with
 * a key and a base URL, as the cache is; none under --restart, with --sandbox, or when the run
 * would start afresh (a finished one under --refresh, or past the cache's max age).
 */
async function resumeOf(
  run: ResolvedRun,
  settings: ResolvedSettings,
  globals: GlobalOptions,
  cache: boolean,
): Promise<PlanResume | undefined> {
  if (globals.sandbox || run.restart || !settings.apiKey || !settings.baseUrl) return undefined;
  const [{ accountOfKey }, { runKeyOf }, { peekRun }, { startsAfresh }] = await Promise.all([
    import('../../../api/account.js'),
    import('../../../pipeline/run/run.js'),
    import('../../../pipeline/journal/journal.js'),
    import('../../../pipeline/journal/renew.js'),
  ]);
  const account = accountOfKey(settings.apiKey);
  const input = await run.source.identity();
  const { key } = runKeyOf(run, input, settings.baseUrl, account);
  const state = await peekRun(run.runsDir, key);
  if (!state || startsAfresh(state, run.cache, { now: Date.now(), cache })) return undefined;
  return { state, mayResend: run.resendUnconfirmed || (await honoured(run, settings)) };
}

/** Whether this service was seen, within the day, to honour idempotency keys: the client's own answer. */
async function honoured(run: ResolvedRun, settings: ResolvedSettings): Promise<boolean> {
  const [{ createClient }, { fileIdempotencyStore }, { getPaths }] = await Promise.all([
    import('../../../api/client.js'),
    import('../../../config/idempotency-memo.js'),
    import('../../../config/paths.js'),
  ]);
  // Nothing is sent: the client only reads what earlier runs learned (idempotency.json).
  const client = createClient({
    baseUrl: settings.baseUrl!,
    apiKey: settings.apiKey!,
    idempotencyStore: fileIdempotencyStore(getPaths().stateDir),
  });
  try {
    return client.honoursIdempotency(run.kind) === true;
  } finally {
    await client.close();
  }
}
