import { extname } from 'node:path';
import { COMPANY_INPUT_FIELDS, CONTACT_INPUT_FIELDS } from '../../../contract/limits.js';
import { ErrorCodes, usageError } from '../../../errors.js';
import { gzipSync } from 'node:zlib';
import { writeOutputFile } from '../../../io/atomic-write.js';
import {
  FILE_FORMATS,
  formatOfExtension,
  isGzipName,
  unwritableFormatOf,
  type FileFormat,
} from '../../../io/file-format.js';
import { createOutputWriter } from '../../../io/write.js';
import {
  companyColumns,
  contactColumns,
  flattenCompany,
  flattenContact,
} from '../../../pipeline/join/output-columns.js';
import type { BulkKind } from '../../../pipeline/types.js';
import { originalFieldsOf } from '../../../pipeline/join/join.js';
import { openService, type Service } from '../../context.js';
import { resultsOfJob } from './find-kind.js';
import type { GlobalOptions } from '../../globals.js';

type Format = FileFormat;
const FORMATS: readonly Format[] = FILE_FORMATS;

/** Picks the output format from --format, else the -o extension (`.csv.gz` is CSV), else JSON. */
export function fetchFormat(format: string | undefined, output: string | undefined): Format {
  const cannot = format === undefined && output ? unwritableFormatOf(output) : undefined;
  if (cannot)
    throw usageError(
      `-o ${output}: cannot write ${cannot}: expected one of ${FORMATS.join(', ')} (optionally .gz)`,
    );
  const named = output ? (formatOfExtension(output) ?? extname(output).slice(1)) : '';
  const f = (format ?? named).toLowerCase() || 'json';
  if (!FORMATS.includes(f as Format)) {
    throw usageError(`--format: expected one of ${FORMATS.join(', ')}, got "${f}"`);
  }
  return f as Format;
}

/** A job's records as the service sent them: JSON (the whole answer) or JSON Lines (one record per line). */
export function renderRaw(
  kind: BulkKind,
  jobId: string,
  records: Record<string, unknown>[],
  remaining: number,
  format: 'json' | 'jsonl',
): string {
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r)}\n`).join('');
  return `${JSON.stringify({ job_id: jobId, [kind]: records, remaining_credits: remaining }, null, 2)}\n`;
}

/**
 * Writes a job's records as CSV/TSV through the bulk run's writer (atomic for a file, streamed to
 * a device or pipe, formula-safe): `custom_fields` (your row id, when it was sent) stands for the
 * input, then the status columns every output carries, the flattened record, and the echo of what
 * was sent as `original_<field>`, without which a record cannot be told apart from another.
 */
export async function writeFlattened(
  kind: BulkKind,
  records: Record<string, unknown>[],
  target: string,
  format: 'csv' | 'tsv' | 'xlsx',
): Promise<void> {
  const inputs = kind === 'contacts' ? CONTACT_INPUT_FIELDS : COMPANY_INPUT_FIELDS;
  const flatten = (r: Record<string, unknown>) =>
    kind === 'contacts' ? flattenContact(r as never) : flattenCompany(r as never);
  const cell = (v: unknown) => (v === null || v === undefined ? null : (v as string | number));
  const writer = await createOutputWriter({
    target,
    format,
    inputHeader: ['custom_fields'],
    jsonKeys: ['custom_fields'],
    extraColumns: [
      ...(kind === 'contacts' ? contactColumns('') : companyColumns('')),
      ...inputs.map((f) => `original_${f}`),
    ],
  });
  try {
    for (const [i, r] of records.entries()) {
      const sent = originalFieldsOf(r) ?? {}; // an object, or the JSON text of one
      const error = typeof r.error === 'string' ? r.error : '';
      await writer.write({
        row: i + 1,
        input: { index: i, line: i + 2, cells: [JSON.stringify(r.custom_fields ?? null)] },
        status: error === '' ? 'enriched' : 'failed',
        error,
        creditCharged: typeof r.credit_charged === 'boolean' ? r.credit_charged : null,
        values: [...flatten(r).map(cell), ...inputs.map((f) => cell(sent[f]))],
      });
    }
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}

/** Writes JSON text as it is, or gzip-compressed when the name ends in `.gz`. */
async function writeRaw(target: string, text: string): Promise<void> {
  if (!isGzipName(target)) return writeOutputFile(target, text);
  await writeOutputFile(target, gzipSync(text));
}

/**
 * Keeps a downloaded job's answers in the results cache, as its run would have: by each
 * record's echo of what was sent (`original_fields`), under the run's request options.
 */
async function keepInCache(
  service: Service,
  kind: BulkKind,
  metadata: Record<string, unknown>,
  answer: { records: unknown[]; remainingCredits: number },
): Promise<void> {
  const { openRunCache } = await import('../../../bulk/run-cache.js');
  const { echoedItems, fillCache } = await import('../../../pipeline/run/cache-use.js');
  const cache = openRunCache(
    { kind, metadata, cache: { read: false, write: true, maxAgeMs: 0 } },
    { baseUrl: service.baseUrl, account: service.client.account },
  );
  if (!cache) return;
  try {
    const records = answer.records as Record<string, unknown>[];
    // A job fetched by itself: its balance is the one now, not while the job ran (a top-up
    // since may hide a shortage), so a record not charged and without data is no no-match to
    // keep; it is read as the shortage's, and left out (rows with data are kept).
    fillCache(cache.cache, kind, echoedItems(kind, records), {
      records,
      remaining: 0,
      at: Date.now(),
    });
  } finally {
    await cache.close();
  }
}

/** `enrich jobs fetch`: downloads one job's results; exit 3 while it is still processing. */
export async function fetchJobResults(o: {
  jobId: string;
  /** Undefined for a job not in the local journal: asked of the service (`resultsOfJob`). */
  kind: BulkKind | undefined;
  output: string | undefined;
  format: string | undefined;
  globals: GlobalOptions;
  /** The request options of the run that sent the job: its answers go to the results cache. */
  cacheAs?: Record<string, unknown> | undefined;
}): Promise<number> {
  const format = fetchFormat(o.format, o.output);
  const service = await openService(o.globals);
  try {
    const found = await resultsOfJob(service.client, o.jobId, o.kind, service.baseUrl);
    const { answer, kind } = found;
    if (found.guessed && !o.globals.quiet)
      process.stderr.write(
        `enrich: job ${o.jobId} is not in the local journal; the service has it as a ${kind} job\n`,
      );
    if (answer.state === 'pending') {
      const progress = answer.total ? ` (${answer.processed ?? 0}/${answer.total})` : '';
      process.stderr.write(
        `enrich: job ${o.jobId} is still processing${progress}; try again later\n`,
      );
      return 3;
    }
    const records = answer.records as Record<string, unknown>[];
    if (o.cacheAs && !service.sandbox) await keepInCache(service, kind, o.cacheAs, answer);
    // Records on stdout are the data: a reader that goes away before the end is a failure
    // (OUTPUT_CLOSED, see main.ts), never 0.
    if (o.output === undefined || o.output === '-') process.exitCode = ErrorCodes.OUTPUT_CLOSED;
    if (format === 'json' || format === 'jsonl')
      await writeRaw(
        o.output ?? '-',
        renderRaw(kind, o.jobId, records, answer.remainingCredits, format),
      );
    else await writeFlattened(kind, records, o.output ?? '-', format);
    if (!o.globals.quiet && o.output) {
      process.stderr.write(
        `enrich: ${answer.records.length} records of job ${o.jobId} written to ${o.output}\n`,
      );
    }
    return 0;
  } finally {
    await service.close();
  }
}
