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

/** Finds a job by its id, or by a unique prefix of it of at least 4 characters. */
export async function findJob(
  runsDir: string,
  id: string,
  now = Date.now(),
): Promise<JobInfo | undefined> {
  const jobs = await listJobs(runsDir, now);
  const exact = jobs.find((j) => j.job_id === id);
  if (exact) return exact;
  const matches = id.length >= 4 ? jobs.filter((j) => j.job_id?.startsWith(id)) : [];
  return matches.length === 1 ? matches[0] : undefined;
}
