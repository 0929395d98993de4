import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { usageError } from '../../../errors.js';
import {
  filterJobs,
  groupByRun,
  JOB_STATUSES,
  listJobs,
  type JobInfo,
  type RunJobs,
} from '../../../pipeline/journal/jobs.js';
import type { GlobalOptions } from '../../globals.js';
import { parseIntegerFlag } from '../../flags.js';
import { printJson } from '../../output.js';

/** The flags of `enrich jobs list`. */
export interface ListFlags {
  limit?: string;
  all?: boolean;
  input?: string;
  status?: string;
}

/** `--status`: one of the statuses a job can have. */
function statusFlag(value: string | undefined): JobInfo['status'] | undefined {
  if (value === undefined) return undefined;
  const s = value.toLowerCase() as JobInfo['status'];
  if (JOB_STATUSES.includes(s)) return s;
  throw usageError(`--status: expected one of ${JOB_STATUSES.join(', ')}, got "${value}"`);
}

/**
 * `--input`: a run is known by its input's real path (symlinks resolved), as the journal keeps
 * it; a run of standard input is journaled, and listed, as `-`, which names no file here.
 */
async function inputFlag(value: string | undefined): Promise<string | undefined> {
  if (value === undefined || value === '-') return value;
  return realpath(value).catch(() => resolve(value));
}

/** `enrich jobs list`: the journaled jobs by run, newest run first, filtered by input and status. */
export async function listJobsCommand(
  runsDir: string,
  flags: ListFlags,
  globals: GlobalOptions,
): Promise<void> {
  if (flags.all && flags.limit !== undefined) throw usageError('--all and --limit: choose one');
  const limit = flags.all
    ? undefined
    : flags.limit === undefined
      ? 10
      : parseIntegerFlag('--limit', flags.limit, 1, 100_000);
  const by = { input: await inputFlag(flags.input), status: statusFlag(flags.status) };
  const jobs = filterJobs(await listJobs(runsDir), by);
  const { runs, hidden } = groupByRun(jobs, limit);
  if (globals.json) return printJson(runs.flatMap((r) => r.jobs));
  if (runs.length === 0) {
    const filtered = by.input !== undefined || by.status !== undefined;
    process.stderr.write(
      filtered
        ? `no journaled job${by.input ? ` of ${by.input}` : ''}${by.status ? ` with status ${by.status}` : ''}\n`
        : 'no journaled jobs: a bulk run (enrich contacts|companies) journals the jobs it sends\n',
    );
    return;
  }
  printRuns(runs);
  if (hidden > 0)
    process.stderr.write(
      `${hidden} older run(s) not shown: --limit ${runs.length + hidden} or --all shows them\n`,
    );
}

/** One table: a run's first job names the run (when it started, its input), its others follow. */
function printRuns(runs: RunJobs[]): void {
  const rows = runs.flatMap((r) =>
    r.jobs.map((j, i) => [
      i === 0 ? r.started_at.slice(0, 19).replace('T', ' ') : '',
      i === 0 ? r.input : '',
      j.job_id ?? '(not accepted)',
      j.kind,
      String(j.rows),
      j.status,
      j.expires_at ?? '',
    ]),
  );
  printTable(['RUN STARTED', 'INPUT', 'JOB', 'KIND', 'ROWS', 'STATUS', 'EXPIRES'], rows);
}

function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  process.stdout.write([line(head), ...rows.map(line)].join('\n') + '\n');
}
