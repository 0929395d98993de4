import { z } from 'zod';
import {
  bulkCompaniesRequestSchema,
  bulkContactsRequestSchema,
  bulkJobSchema,
  companiesResponseSchema,
  companyRequestSchema,
  contactRequestSchema,
  contactResponseSchema,
  contactsResultsResponseSchema,
  emailVerificationRequestSchema,
  emailVerificationResponseSchema,
  errorBodySchema,
  pendingResultsSchema,
} from '../contract/index.js';

type Schema = z.ZodType;

// The sandbox's bulk submission and 202 answers also carry remaining_credits (api-spec.md section 4).
const bulkJobAnswer = bulkJobSchema.extend({ remaining_credits: z.number() });
const pendingAnswer = pendingResultsSchema.extend({ remaining_credits: z.number() });

const json = (schema: Schema, io: 'input' | 'output') => ({
  'application/json': {
    schema: z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }),
  },
});

const errors = (statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      { description: `Error ${s}`, content: json(errorBodySchema, 'output') },
    ]),
  );

function post(summary: string, request: Schema, response: Schema) {
  return {
    post: {
      summary,
      security: [{ bearer: [] }],
      requestBody: { required: true, content: json(request, 'input') },
      responses: {
        '200': { description: 'OK', content: json(response, 'output') },
        ...errors([400, 401, 403, 413, 429]),
      },
    },
  };
}

function results(summary: string, response: Schema) {
  return {
    get: {
      summary,
      security: [{ bearer: [] }],
      parameters: [{ name: 'job_id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'Results', content: json(response, 'output') },
        '202': {
          description: 'Still processing; retry after Retry-After seconds',
          headers: { 'Retry-After': { schema: { type: 'string' } } },
          content: json(pendingAnswer, 'output'),
        },
        ...errors([400, 401, 403, 404, 429]),
      },
    },
  };
}

/** The OpenAPI 3.1 document of the seven service endpoints, generated from the contract schemas. */
export function buildOpenApi(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Enrichment service (enrich sandbox)', version: '1.0.0' },
    servers: [{ url: serverUrl }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths: {
      '/contact': post('Single contact enrichment', contactRequestSchema, contactResponseSchema),
      '/company': post('Single company enrichment', companyRequestSchema, companiesResponseSchema),
      '/contacts': post(
        'Bulk contact enrichment submission',
        bulkContactsRequestSchema,
        bulkJobAnswer,
      ),
      '/companies': post(
        'Bulk company enrichment submission',
        bulkCompaniesRequestSchema,
        bulkJobAnswer,
      ),
      '/contacts/results/{job_id}.json': results(
        'Bulk contact results',
        contactsResultsResponseSchema,
      ),
      '/companies/results/{job_id}.json': results('Bulk company results', companiesResponseSchema),
      '/email-verification': post(
        'Single email verification',
        emailVerificationRequestSchema,
        emailVerificationResponseSchema,
      ),
    },
  };
}
