import type { EnrichClient, ResultsState } from '../../../api/client.js';
import { ApiError, EnrichError } from '../../../errors.js';
import type { BulkKind } from '../../../pipeline/types.js';

/** A job's results as `jobs fetch` reads them, and which kind of job it turned out to be. */
export interface FoundResults {
  kind: BulkKind;
  answer: ResultsState<unknown>;
  /** True when the kind was found by asking (not given, not journaled). */
  guessed: boolean;
}

const ask = (client: EnrichClient, kind: BulkKind, jobId: string) =>
  kind === 'contacts' ? client.getContactsResults(jobId) : client.getCompaniesResults(jobId);

/** 404 (or 400) from a results address: the job is not there, under that kind at least. */
const notThere = (err: unknown) =>
  err instanceof ApiError && (err.status === 404 || err.status === 400);

/**
 * Downloads a job's results; with no kind known (a job not in the local journal), asks the
 * contacts results address and, when that has no such job, the companies one. Each GET is
 * free. api-spec.md gives a 404 several meanings (expired, unknown, another account's, and,
 * by the path naming the kind, a job of the other kind), so a job that neither address has
 * is reported as all of those, never guessed.
 */
export async function resultsOfJob(
  client: EnrichClient,
  jobId: string,
  kind: BulkKind | undefined,
  baseUrl: string,
): Promise<FoundResults> {
  if (kind) {
    try {
      return { kind, answer: await ask(client, kind, jobId), guessed: false };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      // Journaled or named with --kind: not there is expired or another account's (api-spec.md).
      throw new EnrichError(
        'API_NOT_FOUND',
        `the service at ${baseUrl} has no results for ${kind} job ${jobId} (${err.message.replace(/^GET \S+: /, '')})`,
        {
          location: { jobId },
          hint: 'its results may have expired (they are deleted at its expiration date: `enrich jobs list` shows it for the jobs this machine sent), or it may belong to another account or service; its rows are enriched again by running their file again',
        },
      );
    }
  }
  try {
    return { kind: 'contacts', answer: await ask(client, 'contacts', jobId), guessed: true };
  } catch (first) {
    if (!notThere(first)) throw first;
    try {
      return { kind: 'companies', answer: await ask(client, 'companies', jobId), guessed: true };
    } catch (second) {
      if (!notThere(second)) throw second;
      throw new EnrichError(
        'API_NOT_FOUND',
        `job ${jobId} is not in the local journal, and the service at ${baseUrl} has no results for it as a contacts job nor as a companies job (${(first as Error).message.replace(/^GET \S+: /, '')})`,
        {
          location: { jobId },
          hint: 'its results may have expired (they are deleted at its expiration date), it may belong to another account or service, or the id may be mistyped; `enrich jobs list` shows the jobs this machine sent',
        },
      );
    }
  }
}
