/**
 * Library entry: the error family, the wire contract, the API client, the bulk
 * pipeline (read, map, plan, run) and the sandbox. The CLI is built on these.
 */
export * from './errors.js';
export * from './contract/index.js';
export { VERSION } from './version.js';

export * from './api/index.js';
export { toBulkApi } from './api/bulk-api.js';

export { openInput } from './io/read.js';
export type { InputDialect, InputFormat, InputRow, InputSource, ReadOptions } from './io/read.js';
export { createOutputWriter } from './io/write.js';
export type {
  OutputFormat,
  OutputRow,
  OutputWriter,
  OutputWriterOptions,
  RowStatus,
} from './io/write.js';

export {
  detectMapping,
  loadMapping,
  saveMapping,
  mappingToJson,
} from './pipeline/mapping/map-columns.js';
export type { ApiField, ColumnMapping, Kind } from './pipeline/mapping/map-columns.js';
export { planBulk, resolveMapping } from './pipeline/run/plan.js';
export type { MappingOptions, Plan, PlanOptions, ResolvedMapping } from './pipeline/run/plan.js';
export { validateRow } from './pipeline/mapping/validate.js';
export type { InvalidRow, ValidateOptions, ValidRow } from './pipeline/mapping/validate.js';
export { enrichFile, requestMetadata } from './enrich-file.js';
export type { EnrichFileOptions, RequestOptions } from './enrich-file.js';
export { exitCodeFor, runBulk, runsDirOf } from './pipeline/run/run.js';
export type { JoinOutput, RunOptions, RunProgress, RunSummary } from './pipeline/run/run.js';
export type { PollEnv } from './pipeline/run/poll.js';
export type { BulkApi, BulkKind } from './pipeline/run/batch-task.js';
export { listJobs } from './pipeline/journal/jobs.js';
export type { JobInfo } from './pipeline/journal/jobs.js';

export { startSandbox } from './sandbox/index.js';
export type { SandboxHandle, SandboxOptions, SandboxAdmin, Faults } from './sandbox/index.js';

export { getPaths } from './config/paths.js';
export { parseDuration } from './config/duration.js';
