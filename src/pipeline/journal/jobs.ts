import { listRuns, type BatchState, type JournaledRun } from './journal.js';

/** One bulk job as the journal knows it. */
export interface JobInfo {
  job_id: string | null;
  run: string;
  batch: string;
  kind: string;
  input: string;
  rows: number;
  status: 'submitting' | 'running' | 'done' | 'failed' | 'unconfirmed' | 'expired';
  started_at: string;
  expires_at: string | null;
  credits_charged: number | null;
  error: string | null;
  command: string;
  /** The run's request options (what the results cache keys its answers by), when journaled. */
  metadata: Record<string, unknown> | null;
}

function statusOf(b: BatchState, now: number): JobInfo['status'] {
  if (b.expired) return 'expired';
  if (b.spooled) return 'done';
  // Not downloaded and past its expiry: the service has deleted the results by now.
  if (b.job) return typeof b.expires === 'number' && b.expires <= now ? 'expired' : 'running';
  if (b.unconfirmed) return 'unconfirmed';
  if (b.failed) return 'failed';
  return 'submitting';
}

/** The jobs of one journaled run, in batch order, as they stand at `now`. */
export function jobsOfRun(run: JournaledRun, now = Date.now()): JobInfo[] {
  const h = run.state.header;
  return [...run.state.batches.values()]
    .filter((b) => b.splitSize === undefined)
    .map((b) => ({
      job_id: b.job ?? null,
      run: run.key,
      batch: b.id,
      kind: h.kind,
      input: h.input.path,
      rows: b.count,
      status: statusOf(b, now),
      started_at: new Date(h.at).toISOString(),
      expires_at: b.expires ? new Date(b.expires).toISOString() : null,
      credits_charged: b.spooled ? b.spooled.credits : null,
      error: b.unconfirmed?.message ?? b.failed?.message ?? null,
      command: h.command,
      metadata: metadataOf(h.options),
    }));
}

function metadataOf(options: Record<string, unknown>): Record<string, unknown> | null {
  const m = options.metadata;
  return m && typeof m === 'object' && !Array.isArray(m) ? (m as Record<string, unknown>) : null;
}

/** Every journaled job under `runsDir`, newest run first. */
export async function listJobs(runsDir: string, now = Date.now()): Promise<JobInfo[]> {
  return (await listRuns(runsDir)).flatMap((run) => jobsOfRun(run, now));
}

/** The jobs of one run, with what a listing says of it. */
export interface RunJobs {
  run: string;
  kind: string;
  input: string;
  started_at: string;
  jobs: JobInfo[];
  /** Jobs per status, e.g. { done: 10, unconfirmed: 2 }. */
  statuses: Partial<Record<JobInfo['status'], number>>;
}

/**
 * Groups a listing (newest run first, as `listJobs` gives it) by run and keeps the newest
 * `limit` runs (all with `limit` undefined); `hidden` counts the runs left out.
 */
export function groupByRun(
  jobs: readonly JobInfo[],
  limit?: number,
): { runs: RunJobs[]; hidden: number } {
  const runs = new Map<string, RunJobs>();
  for (const j of jobs) {
    let r = runs.get(j.run);
    if (!r) {
      r = {
        run: j.run,
        kind: j.kind,
        input: j.input,
        started_at: j.started_at,
        jobs: [],
        statuses: {},
      };
      runs.set(j.run, r);
    }
    r.jobs.push(j);
    r.statuses[j.status] = (r.statuses[j.status] ?? 0) + 1;
  }
  const all = [...runs.values()];
  const shown = limit === undefined ? all : all.slice(0, limit);
  return { runs: shown, hidden: all.length - shown.length };
}

/** The shortest prefix of a job id that `findJob` looks up. */
export const MIN_JOB_PREFIX = 4;

/** What looking a job up found: the job, or why not (too short a prefix, several, none). */
export type JobLookup =
  | { found: JobInfo }
  | { found?: undefined; why: 'too-short' | 'none' }
  | { found?: undefined; why: 'ambiguous'; matches: string[] };

/** Finds a job by its id, or by a unique prefix of it of at least MIN_JOB_PREFIX characters. */
export async function findJob(runsDir: string, id: string, now = Date.now()): Promise<JobLookup> {
  return matchJob(await listJobs(runsDir, now), id);
}

/** The job of a listing whose id is `id`, or the one whose id starts with it (see `findJob`). */
export function matchJob(jobs: readonly JobInfo[], id: string): JobLookup {
  const exact = jobs.find((j) => j.job_id === id);
  if (exact) return { found: exact };
  // A UUID is the same in any case (RFC 9562), and one pasted from a spreadsheet or a ticket
  // may be upper-cased or carry a space: the journal's own spelling is the one used from here.
  const want = id.trim().toLowerCase();
  const same = jobs.find((j) => j.job_id?.toLowerCase() === want);
  if (same) return { found: same };
  if (want.length < MIN_JOB_PREFIX) return { why: 'too-short' };
  const matches = jobs.filter((j) => j.job_id?.toLowerCase().startsWith(want));
  if (matches.length === 1) return { found: matches[0] as JobInfo };
  if (matches.length === 0) return { why: 'none' };
  return { why: 'ambiguous', matches: matches.map((j) => j.job_id as string) };
}

/** Every status a job can have, in the order a job goes through them. */
export const JOB_STATUSES: readonly JobInfo['status'][] = [
  'submitting',
  'running',
  'done',
  'failed',
  'unconfirmed',
  'expired',
];

/** The jobs of runs of one input (its resolved path) and/or in one status; all when neither is given. */
export function filterJobs(
  jobs: readonly JobInfo[],
  by: { input?: string; status?: JobInfo['status'] },
): JobInfo[] {
  return jobs.filter(
    (j) =>
      (by.input === undefined || j.input === by.input) &&
      (by.status === undefined || j.status === by.status),
  );
}
