/**
 * One error family for the whole tool. Every error has a stable `code` (from the
 * table below, never renamed once released) and the process `exitCode` the CLI
 * ends with (DESIGN.md section 4).
 */

/** Exit codes of the CLI contract. */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  partial: 3,
  auth: 4,
  credits: 5,
  network: 6,
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Stable error codes and the exit code each one maps to. */
export const ErrorCodes = {
  INTERNAL: ExitCode.internal,
  USAGE: ExitCode.usage,
  INPUT_UNREADABLE: ExitCode.usage,
  INPUT_INVALID: ExitCode.usage,
  /** The input file changed while the run read it (replaced, appended, rewritten). */
  INPUT_CHANGED: ExitCode.usage,
  /** Reading or writing a file failed in the environment: disk full, read-only, missing, no permission. */
  FILE_SYSTEM: ExitCode.usage,
  /** The output's reader went away (EPIPE: `| head`): stop reading and sending at once. */
  OUTPUT_CLOSED: ExitCode.usage,
  MAPPING_AMBIGUOUS: ExitCode.usage,
  MAPPING_INVALID: ExitCode.usage,
  CONFIG_INVALID: ExitCode.usage,
  API_VALIDATION: ExitCode.usage,
  API_NOT_FOUND: ExitCode.usage,
  API_CONFLICT: ExitCode.internal,
  API_PAYLOAD_TOO_LARGE: ExitCode.usage,
  RUN_IN_PROGRESS: ExitCode.usage,
  JOURNAL_DAMAGED: ExitCode.usage,
  PARTIAL: ExitCode.partial,
  /** A charged request whose answer was lost, to a service not known to honour Idempotency-Key. */
  UNCONFIRMED: ExitCode.partial,
  AUTH_MISSING: ExitCode.auth,
  AUTH_INVALID: ExitCode.auth,
  AUTH_FORBIDDEN: ExitCode.auth,
  CREDITS_EXHAUSTED: ExitCode.credits,
  RATE_LIMITED: ExitCode.network,
  SERVER_ERROR: ExitCode.network,
  NETWORK: ExitCode.network,
  TIMEOUT: ExitCode.network,
  MALFORMED_RESPONSE: ExitCode.network,
  INTERRUPTED: ExitCode.interrupted,
} as const;
export type ErrorCode = keyof typeof ErrorCodes;

/** Where in an input an error was found. */
export interface ErrorLocation {
  file?: string;
  row?: number;
  line?: number;
  column?: string;
  jobId?: string;
}

export interface EnrichErrorOptions {
  cause?: unknown;
  location?: ErrorLocation;
  /** A short hint telling the user what to do next. */
  hint?: string;
  details?: Record<string, unknown>;
}

/** Base class of every error the tool raises on purpose. */
export class EnrichError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCodeValue;
  readonly location: ErrorLocation | undefined;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: EnrichErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EnrichError';
    this.code = code;
    this.exitCode = ErrorCodes[code];
    this.location = options.location;
    this.hint = options.hint;
    this.details = options.details;
  }
}

/** A field-level problem reported by the service (400) or by local validation. */
export interface FieldError {
  path: string;
  message: string;
}

/** An HTTP error answered by the service; `status` is the HTTP status. */
export class ApiError extends EnrichError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly fieldErrors: readonly FieldError[];
  /** Milliseconds the server asked us to wait (429/503), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: ErrorCode,
    init: {
      status: number;
      method: string;
      path: string;
      message: string;
      fieldErrors?: readonly FieldError[];
      retryAfterMs?: number;
      cause?: unknown;
    },
  ) {
    super(code, init.message, { cause: init.cause });
    this.name = 'ApiError';
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.fieldErrors = init.fieldErrors ?? [];
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** Formats a location as `file, row 3, column "Email"` (only the parts known). */
export function formatLocation(loc: ErrorLocation | undefined): string {
  if (!loc) return '';
  const parts: string[] = [];
  if (loc.file) parts.push(loc.file);
  if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.row !== undefined) parts.push(`row ${loc.row}`);
  if (loc.column !== undefined) parts.push(`column "${loc.column}"`);
  if (loc.jobId) parts.push(`job ${loc.jobId}`);
  return parts.join(', ');
}

/** Narrows an unknown thrown value to an EnrichError. */
export function isEnrichError(err: unknown): err is EnrichError {
  return err instanceof EnrichError;
}

/** Shorthand for a usage error (exit 2). */
export function usageError(message: string, options?: EnrichErrorOptions): EnrichError {
  return new EnrichError('USAGE', message, options);
}

/**
 * Errors that, met by one batch, stop the whole run from sending more: the service refuses
 * what the tool sends (exit 2), the key is refused (exit 4) or the service cannot be
 * reached (exit 6). Other failures end only their batch (exit 3). Credits running out stops
 * a run too (exit 5), read from results.
 */
const STOPS_RUN: ReadonlySet<string> = new Set<ErrorCode>([
  // The service refused a request the tool built (400): every batch would be refused alike.
  'API_VALIDATION',
  'AUTH_INVALID',
  'AUTH_FORBIDDEN',
  'NETWORK',
  'TIMEOUT',
  'SERVER_ERROR',
  'RATE_LIMITED',
]);

/** True when a batch failing with `code` must stop the run (see STOPS_RUN). */
export function stopsRun(code: string): boolean {
  return STOPS_RUN.has(code);
}

/** The exit code of an error code; undefined for a code not in the table. */
export function exitCodeOfCode(code: string): ExitCodeValue | undefined {
  return (ErrorCodes as Record<string, ExitCodeValue>)[code];
}

/**
 * How much a run's stop reason says about it, from its exit code: a refused key, then a
 * refused request, then a service out of reach, then credits; any of them over a reason
 * without a rank.
 */
export function stopRank(code: string): number {
  const exit = exitCodeOfCode(code);
  if (exit === ExitCode.auth) return 4;
  if (exit === ExitCode.usage) return 3;
  if (exit === ExitCode.network) return 2;
  if (exit === ExitCode.credits) return 1;
  return 0;
}
