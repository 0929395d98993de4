import type { InputRow, InputSource } from '../io/read.js';
import { createOutputWriter, type OutputWriter } from '../io/write.js';
import type { BulkKind, LeafResult } from './batch-task.js';
import {
  indexBatch,
  outcomeFromRecords,
  recordsForRow,
  type BatchLookup,
  type RowOutcome,
  type RowStatus,
} from './join.js';
import type { ColumnMapping } from './map-columns.js';
import {
  companyColumns,
  contactColumns,
  flattenCompany,
  flattenContact,
} from './output-columns.js';
import type { RowIndex } from './row-index.js';
import { invalidMessage, openRejects } from './rejects.js';
import { readSpool } from './spool.js';
import { keyOfFields, validateRow, type ValidateOptions } from './validate.js';

/** Where and how the joined output is written. */
export interface JoinOutput {
  target: string;
  format: 'csv' | 'tsv' | 'json' | 'jsonl';
  delimiter?: string;
  bom: boolean;
  formulaEscape: 'auto' | 'always' | 'never';
  explode: boolean;
  prefix: string;
  /** `--rejects file`: the invalid rows again, with their reason and line. */
  rejects?: string;
}

/** Counts of the written output. */
export interface JoinStats {
  statuses: Record<RowStatus, number>;
  /** Enriched rows that got a value, per enriched column. */
  fill: Record<string, number>;
  outputRows: number;
}

type AnyRecord = Record<string, unknown>;

/**
 * The join: a second streaming pass over the input that writes every row, in order,
 * with its outcome. Only one batch's records are in memory at a time, plus the
 * outcomes of rows whose duplicates are still to come.
 */
export async function writeJoined(o: {
  kind: BulkKind;
  source: InputSource;
  mapping: ColumnMapping;
  validate: ValidateOptions;
  dedupe: boolean;
  output: JoinOutput;
  journalDir: string;
  reps: RowIndex;
  dupCounts: Map<number, number>;
  leaves: LeafResult[];
  notSent: string;
  onRow: () => void;
}): Promise<JoinStats> {
  const fieldColumns =
    o.kind === 'contacts' ? contactColumns(o.output.prefix) : companyColumns(o.output.prefix);
  const flatten = (r: AnyRecord) =>
    o.kind === 'contacts' ? flattenContact(r as never) : flattenCompany(r as never);
  // One row per match only in CSV/TSV; JSON already carries every match in `records`.
  const explode = o.output.explode && (o.output.format === 'csv' || o.output.format === 'tsv');
  const rankColumns = explode ? ['enrich_match_rank'] : [];
  const writer: OutputWriter = await createOutputWriter({
    target: o.output.target,
    format: o.output.format,
    inputHeader: o.source.rawHeader,
    jsonKeys: o.source.header,
    extraColumns: [...rankColumns, ...fieldColumns],
    recordKey: o.kind === 'companies' ? 'records' : 'record',
    delimiter: o.output.delimiter,
    bom: o.output.bom,
    formulaEscape: o.output.formulaEscape,
  });
  const stats: JoinStats = {
    statuses: { enriched: 0, failed: 0, invalid: 0, missing: 0, expired: 0 },
    fill: Object.fromEntries(fieldColumns.map((c) => [c, 0])),
    outputRows: 0,
  };
  const rejects = o.output.rejects ? await openRejects(o.source, o.output.rejects) : undefined;
  const cached = new Map<number, RowOutcome<AnyRecord>>();
  const remaining = new Map(o.dupCounts);
  let leafAt = 0;
  let lookup: { leaf: LeafResult; data: BatchLookup } | undefined;
  const blank = fieldColumns.map(() => null);

  const outcomeOfRep = async (index: number, row: InputRow): Promise<RowOutcome<AnyRecord>> => {
    while (leafAt < o.leaves.length && (o.leaves[leafAt] as LeafResult).last < index) leafAt++;
    const leaf = o.leaves[leafAt];
    if (!leaf || leaf.first > index) return noRecords('failed', o.notSent);
    if (leaf.state === 'expired') return noRecords('expired', leaf.error ?? '');
    if (leaf.state !== 'spooled') return noRecords('failed', leaf.error ?? o.notSent);
    if (lookup?.leaf !== leaf) {
      let records = (await readSpool(o.journalDir, leaf.id, o.kind)) as AnyRecord[];
      // Credit retries of the batch: their records join those that ran out of credits.
      for (const extra of leaf.extra ?? [])
        records = records.concat((await readSpool(o.journalDir, extra, o.kind)) as AnyRecord[]);
      const belongs = (r: number) => r >= leaf.first && r <= leaf.last && o.reps.get(r) === r;
      lookup = { leaf, data: indexBatch(records, belongs, (f) => keyOfFields(o.kind, f)) };
    }
    const { data } = lookup;
    let key = '';
    if (!data.byRow.has(index) && data.byKey.size > 0) {
      const v = validateRow(o.kind, o.mapping, row, o.validate);
      key = v.ok ? v.key : '';
    }
    return outcomeFromRecords(recordsForRow(data, index, key, o.dedupe && key !== ''));
  };

  try {
    for await (const row of o.source.rows()) {
      const rep = o.reps.get(row.index);
      let outcome: RowOutcome<AnyRecord>;
      if (rep === undefined || rep < 0) {
        const v = validateRow(o.kind, o.mapping, row, o.validate);
        if (!v.ok) await rejects?.write(row, v);
        outcome = noRecords('invalid', v.ok ? 'invalid' : invalidMessage(v));
      } else if (rep === row.index) {
        outcome = await outcomeOfRep(row.index, row);
        if (remaining.has(rep)) cached.set(rep, outcome);
      } else {
        const first = cached.get(rep) as RowOutcome<AnyRecord>;
        // A duplicate shares the one request that was sent; its credit was charged once, there.
        outcome = { ...first, creditCharged: first.creditCharged === null ? null : false };
        const left = (remaining.get(rep) ?? 1) - 1;
        if (left <= 0) {
          remaining.delete(rep);
          cached.delete(rep);
        } else remaining.set(rep, left);
      }
      stats.statuses[outcome.status]++;
      const records = explode ? outcome.records : outcome.records.slice(0, 1);
      const firstValues = records[0] ? flatten(records[0]) : blank;
      if (outcome.status === 'enriched') {
        firstValues.forEach((v, i) => {
          if (v !== null && v !== '') stats.fill[fieldColumns[i] as string]!++;
        });
      }
      const jsonRecord = o.kind === 'companies' ? outcome.records : (outcome.records[0] ?? null);
      const common = {
        row: row.index + 1,
        input: row,
        status: outcome.status,
        error: outcome.error,
        creditCharged: outcome.creditCharged,
        record: jsonRecord,
      };
      if (records.length <= 1) {
        const rank = explode ? [records.length ? 1 : null] : [];
        await writer.write({ ...common, values: [...rank, ...firstValues] });
        stats.outputRows++;
      } else {
        for (let r = 0; r < records.length; r++) {
          const values = r === 0 ? firstValues : flatten(records[r] as AnyRecord);
          await writer.write({ ...common, values: [r + 1, ...values] });
          stats.outputRows++;
        }
      }
      o.onRow();
    }
    await rejects?.close();
    await writer.close();
  } catch (err) {
    await rejects?.abort();
    await writer.abort();
    throw err;
  }
  return stats;
}

/** The outcome of a row that has no record: nothing was charged for it. */
function noRecords(status: RowStatus, error: string): RowOutcome<AnyRecord> {
  return { status, error, creditCharged: null, records: [] };
}
