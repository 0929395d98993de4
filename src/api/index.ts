/** The API client: one typed method per endpoint, retries, timeouts and errors. */
export { createClient } from './client.js';
export type { ClientOptions, EnrichClient, ResultsState, RetryPolicy } from './client.js';
export { decide, parseRetryAfter, backoffMs, DEFAULT_RETRY_POLICY } from './retry.js';
export type { Failure, RetryDecision, RetryInput } from './retry.js';
