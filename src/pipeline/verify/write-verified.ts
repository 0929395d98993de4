import { EnrichError } from '../../errors.js';
import type { InputRow } from '../../io/read.js';
import {
  createOutputWriter,
  type OutputRow,
  type OutputWriter,
  type RowStatus,
} from '../../io/write.js';
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
  /** Rows the reader could not take whole (too many or too few cells): no address was looked at. */
  malformed: number;
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

/**
 * How the writer follows pass one while both run (run-verify.ts): it waits for each row's
 * address to be settled, and pass one waits while it is too far ahead of the writer.
 */
export interface VerifyFeed {
  /** Resolves at the next event of the run: a row handled by pass one, an answer, a row written, a stop. */
  next(): Promise<void>;
  /** A row was written (pass one may go on if it waits for the writer). */
  wrote(): void;
  /** True once the run gave up (interrupted, a failure of either pass): nothing more is written or sent. */
  stopped(): boolean;
}

/** Waits until the address of `row` (if it holds one) is settled; false once the run stopped. */
async function settled(
  row: InputRow,
  run: Pick<VerifyRun, 'column'>,
  table: ReadonlyMap<string, AddressEntry>,
  feed: VerifyFeed,
  writer: OutputWriter | undefined,
): Promise<boolean> {
  const cell = row.error ? undefined : addressOfCell(row.cells[run.column]);
  if (cell?.kind !== 'address') return !feed.stopped();
  let flushed = writer === undefined;
  for (;;) {
    if (feed.stopped()) return false;
    const entry = table.get(cell.address);
    if (entry?.outcome) return true;
    // Its request is on its way: the rows before it go out now. A reader of stdout sees them
    // at once, and a reader that went away (`| head`) fails the write while little is sent.
    if (entry && !flushed) {
      flushed = true;
      await writer?.flush();
      continue;
    }
    await feed.next();
  }
}

/**
 * Writes every input row, in input order, with its verdict (a second pass over the input).
 * With a `feed`, it runs while pass one does: each row is written as soon as its address is
 * settled (those before it were), so the output starts at once and a write that fails (a
 * reader that went away) fails the run early. Rejects with INTERRUPTED once the run stopped.
 */
export async function writeVerified(
  run: VerifyRun,
  table: ReadonlyMap<string, AddressEntry>,
  feed?: VerifyFeed,
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
    sepLine: output.sepLine === true,
    formulaEscape: output.formulaEscape,
  });
  // Only a reader of stdout needs the rows at once (and shows it left by a failed write): a
  // file is written in blocks, as before (a flush per address cost up to 16% more CPU:
  // BENCHMARKS.md, session 17).
  const flushing = output.target === '-' ? writer : undefined;
  const stats: WrittenStats = {
    rows: 0,
    statuses: { enriched: 0, not_found: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    verdicts: { valid: 0, invalid: 0, unknown: 0 },
    notAnAddress: 0,
    noAddress: 0,
    malformed: 0,
  };
  try {
    for await (const row of source.rows()) {
      if (feed && !(await settled(row, run, table, feed, flushing)))
        throw new EnrichError('INTERRUPTED', `interrupted; ${run.words.resume} to resume`);
      const out = verifiedRow(row, run, table);
      stats.rows++;
      stats.statuses[out.status]++;
      const verdict = out.values[0];
      if (verdict === 'valid' || verdict === 'invalid' || verdict === 'unknown')
        stats.verdicts[verdict]++;
      // A malformed row holds an address as often as not: never counted as "no address".
      if (row.error) stats.malformed++;
      else if (out.status === 'invalid')
        stats[verdict === 'invalid' ? 'notAnAddress' : 'noAddress']++;
      await writer.write(out);
      feed?.wrote();
    }
  } catch (err) {
    await writer.abort();
    throw err;
  }
  await writer.close();
  return stats;
}
