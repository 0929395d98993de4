/** The API client: one typed method per endpoint, retries, timeouts and errors. */
export { createClient } from './client.js';
export type {
  CallOptions,
  ClientOptions,
  CreditsSeen,
  EnrichClient,
  IdempotencyStore,
  LongWait,
  ResultsState,
  RetryPolicy,
} from './client.js';
export { memoryIdempotencyStore } from './idempotency.js';
export { WaitPastDeadline, createRateLimiter, readQuota } from './rate-limiter.js';
export type { LimitScope, RateLimiter } from './rate-limiter.js';
export { decide, parseRetryAfter, backoffMs, DEFAULT_RETRY_POLICY } from './retry.js';
export type { Failure, RetryDecision, RetryInput } from './retry.js';
