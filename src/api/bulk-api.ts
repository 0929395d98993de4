import type { BulkCompaniesRequest, BulkContactsRequest } from '../contract/index.js';
import type { CallOptions, EnrichClient, ResultsState } from './client.js';

/**
 * The client seen through the narrow interface the bulk pipeline needs
 * (`BulkApi` in src/pipeline/batch-task.ts): one submit and one results call,
 * for either kind of job. `defaults.deadline` (the run's, epoch ms) bounds every wait.
 */
export function toBulkApi(client: EnrichClient, defaults: CallOptions = {}) {
  const by = defaults.deadline !== undefined ? { deadline: defaults.deadline } : {};
  /** `journalsAttempts` (on the function): it passes the run's hooks on (BulkApi.submit). */
  const submit = Object.assign(
    (
      kind: 'contacts' | 'companies',
      body: { items: unknown[]; metadata: Record<string, unknown> },
      idempotencyKey: string,
      how: Pick<CallOptions, 'stop' | 'hooks'> = {},
    ) => {
      const opts = { idempotencyKey, ...by, ...how };
      return kind === 'contacts'
        ? client.submitContacts(
            { contacts: body.items, metadata: body.metadata } as BulkContactsRequest,
            opts,
          )
        : client.submitCompanies(
            { companies: body.items, metadata: body.metadata } as BulkCompaniesRequest,
            opts,
          );
    },
    { journalsAttempts: true } as const,
  );
  return {
    submit,
    results(
      kind: 'contacts' | 'companies',
      jobId: string,
      downloadUrl: string,
      stop?: AbortSignal,
    ): Promise<ResultsState<Record<string, unknown>>> {
      const opts = { downloadUrl, ...by, ...(stop && { stop }) };
      return kind === 'contacts'
        ? client.getContactsResults(jobId, opts)
        : client.getCompaniesResults(jobId, opts);
    },
    /** True once the service echoed an Idempotency-Key for `kind`'s submissions. */
    honoursIdempotency: (kind: 'contacts' | 'companies') => client.honoursIdempotency(kind),
    /** 429s the service answered so far. */
    throttled: () => client.throttled(),
  };
}
