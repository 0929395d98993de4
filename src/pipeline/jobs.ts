import { listRuns, type BatchState, type JournaledRun } from './journal.js';

/** One bulk job as the journal knows it. */
export interface JobInfo {
  job_id: string | null;
  run: string;
  batch: string;
  kind: string;
  input: string;
  rows: number;
  status: 'submitting' | 'running' | 'done' | 'failed' | 'expired';
  started_at: string;
  expires_at: string | null;
  credits_charged: number | null;
  error: string | null;
  command: string;
}

function statusOf(b: BatchState): JobInfo['status'] {
  if (b.expired) return 'expired';
  if (b.spooled) return 'done';
  if (b.job) return 'running';
  if (b.failed) return 'failed';
  return 'submitting';
}

/** The jobs of one journaled run, in batch order. */
export function jobsOfRun(run: JournaledRun): JobInfo[] {
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
      status: statusOf(b),
      started_at: new Date(h.at).toISOString(),
      expires_at: b.expires ? new Date(b.expires).toISOString() : null,
      credits_charged: b.spooled ? b.spooled.credits : null,
      error: b.failed?.message ?? null,
      command: h.command,
    }));
}

/** Every journaled job under `runsDir`, newest run first. */
export async function listJobs(runsDir: string): Promise<JobInfo[]> {
  return (await listRuns(runsDir)).flatMap(jobsOfRun);
}

/** Finds a job by its id, or by a unique prefix of it of at least 4 characters. */
export async function findJob(runsDir: string, id: string): Promise<JobInfo | undefined> {
  const jobs = await listJobs(runsDir);
  const exact = jobs.find((j) => j.job_id === id);
  if (exact) return exact;
  const matches = id.length >= 4 ? jobs.filter((j) => j.job_id?.startsWith(id)) : [];
  return matches.length === 1 ? matches[0] : undefined;
}
