import type { InputSource } from '../../../io/read.js';
import type { Plan } from '../../../pipeline/run/plan.js';
import type { ResolvedSettings } from '../../../config/settings.js';
import type { BulkKind, ResolvedRun } from '../../../pipeline/types.js';
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
    sent: plan.sent,
    over_budget: plan.over_budget,
    batches: plan.batches,
    max_credits: plan.max_credits,
  };
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
  run: Pick<ResolvedRun, 'batchSize' | 'maxCredits'>,
): string {
  const cap = run.maxCredits === undefined ? undefined : `--max-credits ${run.maxCredits}`;
  const lines: [string, string][] = [
    ['rows', String(plan.rows)],
    ['valid', String(plan.valid)],
    ['invalid', String(plan.invalid) + (options.rejects ? ` (written to ${options.rejects})` : '')],
    ['duplicates', String(plan.duplicates) + (options.dedupe ? ' (sent once)' : '')],
    ['cached', `${plan.cached} (answered from the results cache, not sent)`],
    ['sent', String(plan.sent) + (cap ? ` (within ${cap})` : '')],
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
  return lines.map(([k, v]) => `${k.padEnd(11)}  ${v}`).join('\n');
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
    const plan = await planBulk(run, cache ? { cache: cache.cache } : {});
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
