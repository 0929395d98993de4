import { describe, expect, it } from 'vitest';
import type { EnrichClient } from '../../../../src/api/client.js';
import { resultsOfJob } from '../../../../src/cli/commands/jobs/find-kind.js';
import { ApiError } from '../../../../src/errors.js';

// `enrich jobs fetch` of a job whose kind is known (journaled, or --kind): a 404 says what it
// may mean and what to do, as for a job not in the journal, never the bare HTTP line alone.

const notFound = (path: string) =>
  new ApiError('API_NOT_FOUND', {
    status: 404,
    method: 'GET',
    path,
    message: `GET ${path}: 404 Not Found (job not found)`,
  });

function client(fail: (path: string) => Error): EnrichClient {
  return {
    getContactsResults: async (id: string) => {
      throw fail(`/contacts/results/${id}`);
    },
    getCompaniesResults: async (id: string) => {
      throw fail(`/companies/results/${id}`);
    },
  } as unknown as EnrichClient;
}

describe('a job of a known kind that the service does not have', () => {
  it('a 404: named with its kind and the service, the likely causes and the way out', async () => {
    const found = resultsOfJob(client(notFound), 'job-1', 'contacts', 'https://api.example.com');
    await expect(found).rejects.toMatchObject({
      code: 'API_NOT_FOUND',
      message:
        'the service at https://api.example.com has no results for contacts job job-1 (404 Not Found (job not found))',
      hint: expect.stringMatching(/expired .*another account or service.*running their file again/),
    });
  });

  it('any other failure is the failure itself', async () => {
    const down = new ApiError('SERVER_ERROR', {
      status: 503,
      method: 'GET',
      path: '/companies/results/j',
      message: 'GET /companies/results/j: 503',
    });
    const found = resultsOfJob(
      client(() => down),
      'j',
      'companies',
      'https://api.example.com',
    );
    await expect(found).rejects.toBe(down);
  });
});
