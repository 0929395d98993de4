/** The API client: one typed method per endpoint, retries, timeouts and errors. */
export { createClient } from './client.js';
export type {
  CallOptions,
  ClientOptions,
  CreditsSeen,
  EnrichClient,
  IdempotencyStore,
  ResultsState,
  RetryPolicy,
} from './client.js';
export { memoryIdempotencyStore } from './idempotency.js';
export { createRateLimiter, readQuota } from './rate-limiter.js';
export { decide, parseRetryAfter, backoffMs, DEFAULT_RETRY_POLICY } from './retry.js';
export type { Failure, RetryDecision, RetryInput } from './retry.js';
