import { usageError } from '../../../errors.js';
import { findJob, MIN_JOB_PREFIX, type JobInfo } from '../../../pipeline/journal/jobs.js';

/**
 * A journaled job by its id or a unique prefix; a prefix too short or matching several jobs
 * is a usage error saying so (never "not in the journal"). With `missingOk`, a job the
 * journal does not know is undefined (`jobs fetch` can still ask the service for it).
 */
export async function journaledJob(
  runsDir: string,
  id: string,
  missingOk: boolean,
): Promise<JobInfo | undefined> {
  const r = await findJob(runsDir, id);
  if (r.found) return r.found;
  if (r.why === 'too-short')
    throw usageError(
      `job id "${id}" is too short: give the full id, or at least its first ${MIN_JOB_PREFIX} characters`,
      { hint: '`enrich jobs list` shows the ids of the journaled jobs' },
    );
  if (r.why === 'ambiguous')
    throw usageError(
      `"${id}" is the start of ${r.matches.length} journaled jobs (${r.matches.join(', ')}): give more of the id`,
    );
  if (missingOk) return undefined;
  throw usageError(`no job ${id} in the local journal (the jobs this machine's runs sent)`, {
    hint: '`enrich jobs list` shows them; `enrich jobs fetch <full id>` downloads the results of any job of your account',
  });
}
