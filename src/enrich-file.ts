import { toBulkApi } from './api/bulk-api.js';
import type { EnrichClient } from './api/client.js';
import { getPaths } from './config/paths.js';
import { settingDefault } from './config/settings-table.js';
import { Limits } from './contract/limits.js';
import { EnrichError } from './errors.js';
import { openInput, type InputSource, type ReadOptions } from './io/read.js';
import { formatOfExtension } from './io/file-format.js';
import { checkOutputTarget, type OutputFormat } from './io/write.js';
import type { BulkApi, BulkKind } from './pipeline/run/batch-task.js';
import { resolveIdColumn, resolveMapping, type MappingOptions } from './pipeline/run/plan.js';
import type { PollEnv } from './pipeline/run/poll.js';
import {
  runBulk,
  runsDirOf,
  type RunOptions,
  type RunProgress,
  type RunSummary,
} from './pipeline/run/run.js';

/** What each row asks of the service (the CLI's request flags). */
export interface RequestOptions {
  /** Contacts: also look up mobile phones (`--mobile`). */
  mobile?: boolean;
  /** Contacts: only contacts that have a work email (`--require-email`). */
  requireEmail?: boolean;
  /** Contacts: only contacts that have a mobile phone; needs `mobile` (`--require-mobile`). */
  requireMobile?: boolean;
  /** Contacts: real-time email verification (`--verify`). */
  verify?: boolean;
  /** Companies: matches per company, 1 to 10 (`--top`). */
  top?: number;
}

// The library's one-call bulk run: it joins the client (api/), the settings' defaults
// (config/) and the pipeline, so it sits beside index.ts rather than inside pipeline/,
// which never reaches into api/ or config/ (DESIGN.md section 2).

/** The `metadata` of a bulk request: contacts send the four booleans, companies `top_matches_returned`. */
export function requestMetadata(kind: BulkKind, r: RequestOptions = {}): Record<string, unknown> {
  if (kind === 'companies') {
    const top = r.top ?? Limits.topMatchesDefault;
    if (!Number.isInteger(top) || top < Limits.topMatchesMin || top > Limits.topMatchesMax)
      throw new EnrichError(
        'USAGE',
        `top: expected an integer from ${Limits.topMatchesMin} to ${Limits.topMatchesMax}, got ${top}`,
      );
    return { top_matches_returned: top };
  }
  if (r.requireMobile && !r.mobile)
    throw new EnrichError('USAGE', 'requireMobile needs mobile: true (the mobile lookup)');
  const meta: Record<string, unknown> = {
    business_email_exists: r.requireEmail === true,
    real_time_verification: r.verify === true,
  };
  if (r.mobile) meta.mobile_phone_enrichment = true;
  if (r.requireMobile) meta.mobile_phone_exists = true;
  return meta;
}

/** `enrichFile`: one bulk enrichment of a file, with the CLI's defaults for everything left out. */
export interface EnrichFileOptions {
  kind: BulkKind;
  /** A path (`-` reads `read.stdin`), or an input already opened with `openInput` (its owner closes it). */
  input: string | InputSource;
  /** The output path, or `-` for stdout. */
  output: string;
  /** The service: a client from `createClient` (its owner closes it), or any BulkApi with its base URL. */
  service: { client: EnrichClient; baseUrl: string } | { api: BulkApi; baseUrl: string };
  read?: ReadOptions;
  /** `--map`, `--mapping`, `--save-mapping`. */
  mapping?: Omit<MappingOptions, 'kind'>;
  /** Your own row id column, echoed in `custom_fields` (`--id-column`). */
  idColumn?: string;
  request?: RequestOptions;
  /** Rows per job (1000). */
  batchSize?: number;
  /** Jobs in flight (4). */
  concurrency?: number;
  /** Send identical rows once (true). */
  dedupe?: boolean;
  maxCredits?: number;
  /** How long to wait for the jobs, in ms (2 h). */
  timeoutMs?: number;
  /** False: submit, journal and return; the same call later finishes (true). */
  wait?: boolean;
  restart?: boolean;
  /** Where run journals and results live (the OS state dir's `runs`, or ENRICH_STATE_DIR's). */
  runsDir?: string;
  /** The output format (the input's own). */
  format?: OutputFormat;
  bom?: boolean;
  formulaEscape?: 'auto' | 'always' | 'never';
  explode?: boolean;
  /** Prefix of the enriched columns (`enriched_`). */
  prefix?: string;
  /** Also write the invalid rows here. */
  rejects?: string;
  /** How the run finds its way back to itself in messages (`enrich <kind> <input> -o <output>`). */
  command?: string;
  /** Stops submitting and polling (the run then ends with an INTERRUPTED error; its journal is kept). */
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** What the user should know about how the file was read (a Windows-1252 fallback...). */
  onWarning?: (message: string) => void;
  /** Clock, sleep and randomness of the poll loop (tests). */
  env?: Partial<PollEnv>;
}

/** Abortable sleep of the poll loop. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Enriches a file end to end, as `enrich contacts|companies <input> -o <output>` does:
 * reads and maps it, sends its valid rows in bulk jobs (journaled: the same call resumes),
 * and writes every row back with its status and enrichment. Never prints.
 */
export async function enrichFile(o: EnrichFileOptions): Promise<RunSummary> {
  const metadata = requestMetadata(o.kind, o.request); // bad request options fail first
  if (o.rejects === '-' && o.output === '-')
    throw new EnrichError(
      'USAGE',
      '--rejects - and the output both go to stdout: they would be mixed into one stream',
      { hint: 'Write one of them to a file: -o enriched.csv, or --rejects rejects.csv.' },
    );
  const source = typeof o.input === 'string' ? await openInput(o.input, o.read) : o.input;
  try {
    for (const w of source.warnings) o.onWarning?.(w);
    // Before anything is sent: a target that cannot be written would fail only at the end.
    await checkOutputTarget(o.output);
    if (o.rejects) await checkOutputTarget(o.rejects);
    const resolved = await resolveMapping(source, { ...o.mapping, kind: o.kind });
    const idColumn = resolveIdColumn(source, o.idColumn);
    // As the CLI: --format, else the output's extension, else the input's own format.
    const format =
      o.format ?? (o.output === '-' ? undefined : formatOfExtension(o.output)) ?? source.format;
    const run: RunOptions = {
      kind: o.kind,
      source,
      mapping: resolved.mapping,
      mappingJson: {
        ...resolved.names,
        ...(resolved.mapping.split
          ? { full_name: source.header[resolved.mapping.split.column] }
          : {}),
      },
      validate: { idColumn, header: source.header },
      metadata,
      batchSize: o.batchSize ?? settingDefault('batchSize'),
      concurrency: o.concurrency ?? settingDefault('concurrency'),
      dedupe: o.dedupe ?? true,
      idColumn,
      maxCredits: o.maxCredits,
      timeoutMs: o.timeoutMs ?? settingDefault('timeoutMs'),
      wait: o.wait ?? true,
      restart: o.restart ?? false,
      runsDir: o.runsDir ?? runsDirOf(getPaths().stateDir),
      command: o.command ?? `enrich ${o.kind} ${source.name} -o ${o.output}`,
      output: {
        target: o.output,
        format,
        // CSV out of CSV keeps the input's delimiter.
        delimiter:
          source.format === 'csv' && format === 'csv' ? source.dialect.delimiter : undefined,
        bom: o.bom ?? false,
        formulaEscape: o.formulaEscape ?? settingDefault('formulaEscape'),
        explode: o.explode ?? false,
        prefix: o.prefix ?? settingDefault('prefix'),
        rejects: o.rejects,
      },
      api: 'api' in o.service ? o.service.api : toBulkApi(o.service.client),
      baseUrl: o.service.baseUrl,
      env: {
        now: Date.now,
        sleep,
        random: Math.random,
        ...o.env,
        ...(o.signal ? { signal: o.signal } : {}),
      },
      onProgress: o.onProgress,
      onWarning: o.onWarning,
    };
    return await runBulk(run);
  } finally {
    if (typeof o.input === 'string') await source.close();
  }
}
