import { copyWith } from '../../copy-with.js';
import type { InputRow, InputSource } from '../../io/read.js';
import { createOutputWriter, type OutputRow } from '../../io/write.js';
import type { BulkKind, JoinOutput } from '../types.js';
import { noRecords, type RowOutcome, type RowStatus } from './join.js';
import { enrichedColumns, tableColumns, type Flat } from './output-columns.js';
import { invalidMessage, openRejects, recordKeyOf } from './rejects.js';
import { leftOutNote, type InvalidRow } from '../mapping/validate.js';
import type { ColumnMapping } from '../mapping/mapping-types.js';

/** Counts of the written output. */
export interface JoinStats {
  statuses: Record<RowStatus, number>;
  /** Sent rows an answer left out (`missing`, charge unknown), duplicates not counted. */
  missingSent: number;
  /** Enriched rows that got a value, per enriched column. */
  fill: Record<string, number>;
  outputRows: number;
}

type AnyRecord = Record<string, unknown>;

/** The output side of the join: rows go in, in order, with their outcome; counts come out. */
export interface JoinWriter {
  /** Writes one input row with its outcome (several rows with --explode). */
  write(row: InputRow, outcome: RowOutcome<AnyRecord>): Promise<void>;
  /** Writes an invalid row, to the output and to the `--rejects` file. */
  writeInvalid(row: InputRow, v: InvalidRow): Promise<void>;
  /** Flushes and renames the output (and rejects) into place. */
  close(): Promise<JoinStats>;
  /** Removes what was written: the output is never left half-made. */
  abort(): Promise<void>;
}

/** Opens the rejects file, if any; when it cannot be opened, `undo` first (the output opened before it). */
async function openRejectsOr(
  o: { source: InputSource; kind: BulkKind; output: JoinOutput },
  path: string | undefined,
  undo: () => Promise<void>,
) {
  try {
    return path ? await openRejects(o.source, path, o.kind, o.output.rejectsDialect) : undefined;
  } catch (err) {
    await undo();
    throw err;
  }
}

/** Counts of an output not written yet. */
function newStats(fieldColumns: readonly string[]): JoinStats {
  return {
    statuses: { enriched: 0, not_found: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    fill: Object.fromEntries(fieldColumns.map((c) => [c, 0])),
    outputRows: 0,
    missingSent: 0,
  };
}

/** Counts a row's status, and a sent row its job's answer left out (its charge unknown). */
function countOutcome(stats: JoinStats, outcome: RowOutcome<AnyRecord>): void {
  stats.statuses[outcome.status]++;
  if (outcome.status === 'missing' && outcome.creditCharged === 'unknown') stats.missingSent++;
}

/** Counts the enriched columns that got a value (built for every row: no allocation). */
function countFill(stats: JoinStats, columns: readonly string[], values: readonly unknown[]): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && v !== '') stats.fill[columns[i] as string]!++;
  }
}

/** The columns of matches 2..n: `enriched_name_2`, `enriched_website_2`, ... `enriched_name_3` ... */
/** The first match's values, then each further match's (blank where fewer came back). */
function withMoreMatches(
  first: Flat[],
  all: readonly unknown[],
  width: number,
  flatten: (r: AnyRecord) => Flat[],
): Flat[] {
  const values = first.slice();
  for (let m = 1; values.length < first.length + width; m++) {
    const r = all[m];
    // Stryker disable next-line ArrowFunction: a sink writes undefined as it writes null, as an empty cell
    values.push(...(r ? flatten(r as AnyRecord) : first.map(() => null)));
  }
  return values;
}

/**
 * A row's `enrich_error`: a row sent (or answered from the cache) without some of its mapped
 * fields says so (a bad email, a JSON object in a mapped column: leftOutNote).
 */
function errorWithNote(mapping: ColumnMapping | undefined, header: readonly string[]) {
  return (outcome: RowOutcome<AnyRecord>, row: InputRow): string => {
    const note =
      mapping && outcome.creditCharged !== null ? leftOutNote(mapping, row, header) : undefined;
    if (!note) return outcome.error;
    return outcome.error ? `${outcome.error}; ${note}` : note;
  };
}

/** Opens the output (and `--rejects`) of a bulk run. `onRow` fires after each input row. */
export async function openJoinWriter(o: {
  kind: BulkKind;
  source: InputSource;
  output: JoinOutput;
  /** The run's mapping: a row sent without some of its mapped fields says so (`leftOutNote`). */
  mapping?: ColumnMapping;
  onRow: () => void;
}): Promise<JoinWriter> {
  const { flatten, pick } = enrichedColumns(o.kind, o.output.prefix, o.output.fields);
  const { fieldColumns, more, extra, explode } = tableColumns(o.kind, o.output);
  const writer = await createOutputWriter({
    target: o.output.target,
    format: o.output.format,
    inputHeader: o.source.rawHeader,
    jsonKeys: o.source.header,
    extraColumns: extra,
    recordKey: recordKeyOf(o.kind),
    delimiter: o.output.delimiter,
    bom: o.output.bom,
    sepLine: o.output.sepLine === true,
    formulaEscape: o.output.formulaEscape,
  });
  const rejects = await openRejectsOr(o, o.output.rejects, () => writer.abort());
  const stats = newStats(fieldColumns);
  // Stryker disable next-line ArrowFunction: a sink writes undefined as it writes null, as an empty cell
  const blank = fieldColumns.map(() => null);

  const withNote = errorWithNote(o.mapping, o.source.header);

  const write = async (row: InputRow, outcome: RowOutcome<AnyRecord>) => {
    countOutcome(stats, outcome);
    const all = outcome.records;
    const first = all[0];
    const firstValues = first ? flatten(first) : blank;
    if (outcome.status === 'enriched') countFill(stats, fieldColumns, firstValues);
    // Built in place (no spreads): this runs for every row of the output.
    const out: OutputRow = {
      row: row.index + 1,
      input: row,
      status: outcome.status,
      error: withNote(outcome, row),
      creditCharged: outcome.creditCharged,
      cachedAt: outcome.cachedAt === undefined ? null : new Date(outcome.cachedAt).toISOString(),
      values: firstValues,
      record: pick(o.kind === 'companies' ? all : (first ?? null)),
    };
    if (!explode) {
      if (more.length > 0) out.values = withMoreMatches(firstValues, all, more.length, flatten);
      await writer.write(out);
      stats.outputRows++;
    } else if (all.length <= 1) {
      out.values = [first ? 1 : null, ...firstValues];
      await writer.write(out);
      stats.outputRows++;
    } else {
      for (let r = 0; r < all.length; r++) {
        const values = r === 0 ? firstValues : flatten(all[r] as AnyRecord);
        await writer.write(copyWith(out, { values: [r + 1, ...values] }));
        stats.outputRows++;
      }
    }
    o.onRow();
  };

  return {
    write,
    async writeInvalid(row, v) {
      await rejects?.write(row, v);
      await write(row, noRecords('invalid', invalidMessage(v)));
    },
    async close() {
      await rejects?.close();
      await writer.close();
      return stats;
    },
    async abort() {
      await rejects?.abort();
      await writer.abort();
    },
  };
}
