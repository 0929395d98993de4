import type { BulkCompaniesRequest, BulkContactsRequest } from '../contract/index.js';
import type { EnrichClient, ResultsState } from './client.js';

/**
 * The client seen through the narrow interface the bulk pipeline needs
 * (`BulkApi` in src/pipeline/batch-task.ts): one submit and one results call,
 * for either kind of job.
 */
export function toBulkApi(client: EnrichClient) {
  return {
    submit(
      kind: 'contacts' | 'companies',
      body: { items: unknown[]; metadata: Record<string, unknown> },
      idempotencyKey: string,
    ) {
      return kind === 'contacts'
        ? client.submitContacts(
            { contacts: body.items, metadata: body.metadata } as BulkContactsRequest,
            {
              idempotencyKey,
            },
          )
        : client.submitCompanies(
            { companies: body.items, metadata: body.metadata } as BulkCompaniesRequest,
            {
              idempotencyKey,
            },
          );
    },
    results(
      kind: 'contacts' | 'companies',
      jobId: string,
      downloadUrl: string,
    ): Promise<ResultsState<Record<string, unknown>>> {
      return kind === 'contacts'
        ? client.getContactsResults(jobId, { downloadUrl })
        : client.getCompaniesResults(jobId, { downloadUrl });
    },
  };
}
