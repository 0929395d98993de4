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
export type { OutputRow, OutputWriter, OutputWriterOptions } from './io/write.js';
export type { FileFormat } from './io/file-format.js';

export {
  detectMapping,
  loadMapping,
  saveMapping,
  mappingToJson,
} from './pipeline/mapping/map-columns.js';
export type { ApiField, ColumnMapping } from './pipeline/mapping/map-columns.js';
export { resolveMapping } from './pipeline/mapping/resolve-mapping.js';
export type { MappingOptions, ResolvedMapping } from './pipeline/mapping/resolve-mapping.js';
export { validateRow } from './pipeline/mapping/validate.js';
export type { InvalidRow, ValidateOptions, ValidRow } from './pipeline/mapping/validate.js';
export type {
  BulkApi,
  BulkKind,
  FormulaEscape,
  JobEvent,
  JournalsAttempts,
  JoinOutput,
  ResolvedRun,
  RowStatus,
  RunProgress,
  RunWords,
  SendControl,
  SendHooks,
  StopReason,
  SubmitFn,
} from './pipeline/types.js';
export { planBulk } from './pipeline/run/plan.js';
export type { Plan } from './pipeline/run/plan.js';
export { exitCodeFor, runBulk, runKeyOf, runsDirOf } from './pipeline/run/run.js';
export type { RunDeps, RunSummary } from './pipeline/run/run.js';
export { LIBRARY_WORDS } from './pipeline/run/messages.js';
export type { PollEnv } from './pipeline/run/poll.js';
export { listJobs } from './pipeline/journal/jobs.js';
export type { JobInfo } from './pipeline/journal/jobs.js';

export type { BulkRunOptions } from './bulk/options.js';
export { resolveRun, outputFormatOf } from './bulk/resolve-run.js';
export { enrichFile } from './bulk/enrich-file.js';
export type { EnrichFileOptions } from './bulk/enrich-file.js';
export { requestMetadata } from './bulk/request-metadata.js';
export type { RequestOptions } from './bulk/request-metadata.js';
export { verifyEmailsFile, toVerifyApi } from './bulk/verify-emails.js';
export type {
  VerifyEmailsOptions,
  VerifyPlan,
  VerifyProgress,
  VerifyService,
  VerifySummary,
} from './bulk/verify-emails.js';
export type { VerifyRunOptions } from './bulk/verify-options.js';
export type { Verdict, VerifyAnswer, VerifyApi, VerifyFn } from './pipeline/verify/types.js';

export { startSandbox } from './sandbox/index.js';
export type { SandboxHandle, SandboxOptions, SandboxAdmin, Faults } from './sandbox/index.js';

export { getPaths } from './config/paths.js';
export { parseDuration } from './config/duration.js';
