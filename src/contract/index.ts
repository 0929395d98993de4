/** The wire format of api-spec.md: one source of schemas and types for client and sandbox. */
export * from './limits.js';
export * from './rules.js';
export * from './email.js';
export * from './credits.js';
export * from './requests.js';
export * from './responses.js';
export * from './paths.js';
