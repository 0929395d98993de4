import type { Command } from 'commander';
import { action } from '../action.js';
import type { JobInfo } from '../../pipeline/journal/jobs.js';
import type { ListFlags } from './jobs/list.js';

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
    .option('--input <file>', 'only the runs of this input file')
    .option(
      '--status <status>',
      'only jobs in this status: submitting, running, done, failed, unconfirmed or expired',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich jobs list\n  $ enrich jobs list --limit 3\n  $ enrich jobs list --input leads.csv --status running\n  $ enrich jobs list --all --json',
    )
    .action(
      action<ListFlags>(async ({ options, globals }) => {
        const { runsDir } = await locate();
        const { listJobsCommand } = await import('./jobs/list.js');
        await listJobsCommand(runsDir, options, globals);
      }),
    );
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
        const { journaledJob } = await import('./jobs/lookup.js');
        const job = (await journaledJob(runsDir, args[0] as string, false)) as JobInfo;
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
      'download the raw results of one job (JSON, or flattened CSV/TSV/XLSX by -o extension or --format)',
    )
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .option('--format <format>', 'json | jsonl | csv | tsv | xlsx (default: from -o, else json)')
    .option(
      '--kind <kind>',
      'contacts | companies (default: from the journal, else asked of the service)',
    )
    .option('--no-cache', "do not keep the job's answers in the results cache")
    .addHelpText(
      'after',
      '\nExamples:\n  $ enrich jobs fetch 3f2a9c1e-...-9b1d -o results.csv\n  $ enrich jobs fetch 3f2a9c1e-...-9b1d --kind companies > results.json',
    )
    .action(
      action<{ output?: string; format?: string; kind?: string; cache?: boolean }>(
        async ({ args, options, globals }) => {
          // Pasted with a space or a line break around it: the id is what is between.
          const id = (args[0] as string).trim();
          // A journal that cannot be read is no reason not to ask the service (checked: false).
          const { runsDir } = await locate(false);
          const { journaledJob } = await import('./jobs/lookup.js');
          const job = await journaledJob(runsDir, id, true);
          const kind = options.kind ?? job?.kind;
          if (kind !== undefined && kind !== 'contacts' && kind !== 'companies') {
            const { usageError } = await import('../../errors.js');
            throw usageError(`--kind: expected contacts or companies, got "${kind}"`);
          }
          // The journal knows which address its run sent the job to: another kind's is a 404.
          if (job && options.kind !== undefined && options.kind !== job.kind) {
            const { usageError } = await import('../../errors.js');
            throw usageError(
              `--kind ${options.kind}: job ${job.job_id} is journaled as a ${job.kind} job (its run sent it to /${job.kind}); leave out --kind`,
            );
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

async function locate(checked = true): Promise<{ runsDir: string }> {
  const [{ getPaths }, { runsDirOf }] = await Promise.all([
    import('../../config/paths.js'),
    import('../../pipeline/run/run.js'),
  ]);
  const runsDir = runsDirOf(getPaths().stateDir);
  const { checkRunsDir } = await import('./runs-dir.js');
  if (checked) await checkRunsDir(runsDir);
  return { runsDir };
}
