import { extname } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { COMPANY_INPUT_FIELDS, CONTACT_INPUT_FIELDS } from '../../../contract/limits.js';
import { usageError } from '../../../errors.js';
import { writeOutputFile } from '../../../io/atomic-write.js';
import { escapeFormula } from '../../../io/formula-escape.js';
import {
  companyColumns,
  contactColumns,
  flattenCompany,
  flattenContact,
} from '../../../pipeline/join/output-columns.js';
import type { BulkKind } from '../../../pipeline/types.js';
import { originalFieldsOf } from '../../../pipeline/join/join.js';
import { openService } from '../../context.js';
import type { GlobalOptions } from '../../globals.js';

type Format = 'json' | 'jsonl' | 'csv' | 'tsv';
const FORMATS: readonly Format[] = ['json', 'jsonl', 'csv', 'tsv'];

/** Picks the output format from --format, else the -o extension, else JSON. */
export function fetchFormat(format: string | undefined, output: string | undefined): Format {
  const f = (format ?? (output ? extname(output).slice(1) : '') ?? '').toLowerCase() || 'json';
  if (!FORMATS.includes(f as Format)) {
    throw usageError(`--format: expected one of ${FORMATS.join(', ')}, got "${f}"`);
  }
  return f as Format;
}

/** Renders the records of a job: JSON as the service sent them, or flattened rows. */
export function renderResults(
  kind: BulkKind,
  jobId: string,
  records: Record<string, unknown>[],
  remaining: number,
  format: Format,
): string {
  if (format === 'json') {
    return `${JSON.stringify({ job_id: jobId, [kind]: records, remaining_credits: remaining }, null, 2)}\n`;
  }
  if (format === 'jsonl') return records.map((r) => `${JSON.stringify(r)}\n`).join('');
  const columns = kind === 'contacts' ? contactColumns('') : companyColumns('');
  const flatten = (r: Record<string, unknown>) =>
    kind === 'contacts' ? flattenContact(r as never) : flattenCompany(r as never);
  // The echo of what was sent, last: without it a record cannot be told apart from another.
  const inputs = kind === 'contacts' ? CONTACT_INPUT_FIELDS : COMPANY_INPUT_FIELDS;
  const cell = (v: unknown) =>
    typeof v === 'string'
      ? escapeFormula(v, 'auto')
      : v === null || v === undefined
        ? ''
        : String(v);
  const rows = records.map((r) => {
    const sent = originalFieldsOf(r) ?? {}; // an object, or the JSON text of one
    return [
      JSON.stringify(r.custom_fields ?? null),
      typeof r.error === 'string' ? escapeFormula(r.error, 'auto') : '',
      r.credit_charged === true ? 'true' : r.credit_charged === false ? 'false' : '',
      ...flatten(r).map(cell),
      ...inputs.map((f) => cell(sent[f])),
    ];
  });
  const header = [
    'custom_fields',
    'error',
    'credit_charged',
    ...columns,
    ...inputs.map((f) => `original_${f}`),
  ];
  return stringify([header, ...rows], {
    delimiter: format === 'tsv' ? '\t' : ',',
    record_delimiter: '\n',
    // A lone CR inside a value must be quoted too, or a reader would split the row there.
    quote_record_delimiter: true,
  });
}

/** `enrich jobs fetch`: downloads one job's results; exit 3 while it is still processing. */
export async function fetchJobResults(o: {
  jobId: string;
  kind: BulkKind;
  output: string | undefined;
  format: string | undefined;
  globals: GlobalOptions;
}): Promise<number> {
  const format = fetchFormat(o.format, o.output);
  const service = await openService(o.globals);
  try {
    const answer =
      o.kind === 'contacts'
        ? await service.client.getContactsResults(o.jobId)
        : await service.client.getCompaniesResults(o.jobId);
    if (answer.state === 'pending') {
      const progress = answer.total ? ` (${answer.processed ?? 0}/${answer.total})` : '';
      process.stderr.write(
        `enrich: job ${o.jobId} is still processing${progress}; try again later\n`,
      );
      return 3;
    }
    const text = renderResults(
      o.kind,
      o.jobId,
      answer.records as Record<string, unknown>[],
      answer.remainingCredits,
      format,
    );
    if (!o.output || o.output === '-') process.stdout.write(text);
    else await writeOutputFile(o.output, text);
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
