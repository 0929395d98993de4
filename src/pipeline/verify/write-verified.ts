import { EnrichError } from '../../errors.js';
import type { InputRow } from '../../io/read.js';
import { createOutputWriter, type OutputRow, type RowStatus } from '../../io/write.js';
import { addressOfCell } from './address.js';
import type { AddressEntry, Verdict, VerifyRun } from './types.js';

/** The columns `verify-emails` adds after the status columns every bulk output has. */
export const VERIFY_COLUMNS = ['verify_status', 'verify_credit_charged'] as const;

/** Counts of the written output. */
export interface WrittenStats {
  rows: number;
  statuses: Record<RowStatus, number>;
  verdicts: Record<Verdict, number>;
  /** Invalid rows: a value that is not an address (never sent), or no address at all. */
  notAnAddress: number;
  noAddress: number;
}

const ISO = (ms: number) => new Date(ms).toISOString();

function plain(row: InputRow, status: RowStatus, error: string, verdict = ''): OutputRow {
  return {
    row: row.index + 1,
    input: row,
    status,
    error,
    creditCharged: null,
    cachedAt: null,
    values: [verdict, null],
    record: null,
  };
}

/**
 * The output row of one input row (pure): the verdict of its address, fanned out to every
 * row that holds it. Only the row that was sent says what it was charged; its duplicates
 * say `false` (answered) or nothing (not answered). A cached verdict was charged when it
 * was looked up, not now: `false`, with `enrich_cached_at` saying when.
 */
export function verifiedRow(
  row: InputRow,
  run: Pick<VerifyRun, 'column' | 'columnName'>,
  table: ReadonlyMap<string, AddressEntry>,
): OutputRow {
  if (row.error) return plain(row, 'invalid', row.error);
  const cell = addressOfCell(row.cells[run.column]);
  if (cell.kind === 'empty')
    return plain(row, 'invalid', `no email address in column "${run.columnName}"`);
  if (cell.kind === 'bad')
    return plain(row, 'invalid', `not an email address: ${cell.problem}; not sent`, 'invalid');
  const entry = table.get(cell.address);
  const outcome = entry?.outcome;
  if (!entry || !outcome) throw new EnrichError('INTERNAL', `no outcome for row ${row.index + 1}`);
  const sent = entry.first === row.index;
  if (outcome.kind === 'refused') return plain(row, 'invalid', outcome.message);
  if (outcome.kind === 'failed') {
    const out = plain(row, 'failed', outcome.message);
    out.creditCharged = sent ? outcome.charge : null;
    out.values = ['', out.creditCharged];
    return out;
  }
  const { answer, from, at } = outcome;
  const charged = sent && from !== 'cache' ? answer.credit_charged === true : false;
  return {
    row: row.index + 1,
    input: row,
    status: 'enriched',
    error: answer.error ?? '',
    creditCharged: charged,
    cachedAt: from === 'cache' ? ISO(at) : null,
    values: [answer.status, charged],
    record: { email: answer.email, status: answer.status, credit_charged: charged },
  };
}

/** Writes every input row, in input order, with its verdict (a second pass over the input). */
export async function writeVerified(
  run: VerifyRun,
  table: ReadonlyMap<string, AddressEntry>,
): Promise<WrittenStats> {
  const { output, source } = run;
  const writer = await createOutputWriter({
    target: output.target,
    format: output.format,
    inputHeader: source.rawHeader,
    jsonKeys: source.header,
    extraColumns: [...VERIFY_COLUMNS],
    delimiter: output.delimiter,
    bom: output.bom,
    formulaEscape: output.formulaEscape,
  });
  const stats: WrittenStats = {
    rows: 0,
    statuses: { enriched: 0, not_found: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    verdicts: { valid: 0, invalid: 0, unknown: 0 },
    notAnAddress: 0,
    noAddress: 0,
  };
  try {
    for await (const row of source.rows()) {
      const out = verifiedRow(row, run, table);
      stats.rows++;
      stats.statuses[out.status]++;
      const verdict = out.values[0];
      if (verdict === 'valid' || verdict === 'invalid' || verdict === 'unknown')
        stats.verdicts[verdict]++;
      if (out.status === 'invalid') stats[verdict === 'invalid' ? 'notAnAddress' : 'noAddress']++;
      await writer.write(out);
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  await writer.close();
  return stats;
}
