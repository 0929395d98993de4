import type { Command } from 'commander';
import { action } from '../action.js';
import { parseIntegerFlag } from '../flags.js';
import type { RunJobs } from '../../pipeline/journal/jobs.js';

const EXAMPLES = `
Examples:
  $ enrich jobs list
  $ enrich jobs list --limit 3 --json
  $ enrich jobs show 3f2a9c1e
  $ enrich jobs fetch 3f2a9c1e-...-9b1d -o results.csv
  $ enrich jobs fetch 3f2a9c1e-...-9b1d --kind companies > results.json`;

/** Registers `enrich jobs list | show <id> | fetch <id>`. */
export function registerJobs(program: Command): void {
  const jobs = program
    .command('jobs')
    .description('bulk jobs from the local run journal; fetch results of a job by id');
  jobs.addHelpText('after', EXAMPLES);
  registerList(jobs);
  registerShow(jobs);
  registerFetch(jobs);
}

function registerList(jobs: Command): void {
  jobs
    .command('list')
    .description('list journaled jobs by run, newest run first: kind, rows, status, expiry')
    .option('--limit <n>', 'show the newest n runs (default 10)')
    .option('--all', 'show every run')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich jobs list\n  $ enrich jobs list --limit 3\n  $ enrich jobs list --all --json',
    )
    .action(
      action<{ limit?: string; all?: boolean }>(async ({ options, globals }) => {
        const { runsDir } = await locate();
        const { listJobs, groupByRun } = await import('../../pipeline/journal/jobs.js');
        const limit = options.all
          ? undefined
          : options.limit === undefined
            ? 10
            : parseIntegerFlag('--limit', options.limit, 1, 100_000);
        const { runs, hidden } = groupByRun(await listJobs(runsDir), limit);
        const { printJson } = await import('../output.js');
        if (globals.json) return printJson(runs.flatMap((r) => r.jobs));
        if (runs.length === 0) {
          process.stderr.write('no journaled jobs\n');
          return;
        }
        printRuns(runs);
        if (hidden > 0)
          process.stderr.write(
            `${hidden} older run(s) not shown: --limit ${runs.length + hidden} or --all shows them\n`,
          );
      }),
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

function registerShow(jobs: Command): void {
  jobs
    .command('show <id>')
    .description('show one journaled job (full id or a unique prefix)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich jobs show 3f2a9c1e\n  $ enrich jobs show 3f2a9c1e --json',
    )
    .action(
      action(async ({ args, globals }) => {
        const { runsDir } = await locate();
        const { findJob } = await import('../../pipeline/journal/jobs.js');
        const job = await findJob(runsDir, args[0] as string);
        if (!job) throw await notJournaled(args[0] as string);
        const { printJson, printKeyValues } = await import('../output.js');
        if (globals.json) printJson(job);
        else printKeyValues({ ...job });
      }),
    );
}

function registerFetch(jobs: Command): void {
  jobs
    .command('fetch <id>')
    .description(
      'download the raw results of one job (JSON, or flattened CSV/TSV by -o extension or --format)',
    )
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .option('--format <format>', 'json | jsonl | csv | tsv (default: from -o, else json)')
    .option('--kind <kind>', 'contacts | companies (default: from the journal)')
    .option('--no-cache', "do not keep the job's answers in the results cache")
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich jobs fetch 3f2a9c1e-...-9b1d -o results.csv\n  $ enrich jobs fetch 3f2a9c1e-...-9b1d --kind companies > results.json',
    )
    .action(
      action<{ output?: string; format?: string; kind?: string; cache?: boolean }>(
        async ({ args, options, globals }) => {
          const id = args[0] as string;
          const { runsDir } = await locate();
          const { findJob } = await import('../../pipeline/journal/jobs.js');
          const job = await findJob(runsDir, id);
          const kind = options.kind ?? job?.kind;
          if (kind !== 'contacts' && kind !== 'companies') {
            const { usageError } = await import('../../errors.js');
            throw usageError(`--kind: expected contacts or companies, got ${kind ?? 'nothing'}`, {
              hint: `job ${id} is not in the local journal, so say which kind it is: --kind contacts`,
            });
          }
          const { fetchJobResults } = await import('./jobs/fetch.js');
          return fetchJobResults({
            jobId: job?.job_id ?? id,
            kind,
            output: options.output,
            format: options.format,
            globals,
            // A journaled job's run says which request options its answers answer.
            cacheAs: options.cache === false ? undefined : (job?.metadata ?? undefined),
          });
        },
      ),
    );
}

async function locate(): Promise<{ runsDir: string }> {
  const [{ getPaths }, { runsDirOf }] = await Promise.all([
    import('../../config/paths.js'),
    import('../../pipeline/run/run.js'),
  ]);
  return { runsDir: runsDirOf(getPaths().stateDir) };
}

async function notJournaled(id: string) {
  const { usageError } = await import('../../errors.js');
  return usageError(`job ${id} is not in the local journal`, {
    hint: 'run `enrich jobs list` to see the known jobs',
  });
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
