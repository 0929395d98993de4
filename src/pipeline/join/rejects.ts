import type { InputRow, InputSource } from '../../io/read.js';
import { createOutputWriter, type OutputWriter } from '../../io/write.js';
import { formatOfPath } from '../../io/file-format.js';
import type { InvalidRow } from '../mapping/validate.js';
import type { BulkKind, RejectsDialect } from '../types.js';

/**
 * The JSON key of a row's answer, in the output and the rejects alike: `record` (a contact)
 * or `records` (a company's matches).
 */
export function recordKeyOf(kind: BulkKind): 'record' | 'records' {
  return kind === 'companies' ? 'records' : 'record';
}

/** The message of an invalid row, naming its column when one is at fault. */
export function invalidMessage(v: InvalidRow): string {
  return v.column ? `${v.error} (column "${v.column}")` : v.error;
}

/** The `--rejects` file: every invalid row with its cells, status, reason and line number. */
export async function openRejects(
  source: InputSource,
  target: string,
  kind: BulkKind,
  dialect?: RejectsDialect,
): Promise<{
  write(row: InputRow, v: InvalidRow): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}> {
  const writer: OutputWriter = await createOutputWriter({
    target,
    format: formatOfPath(target),
    inputHeader: source.rawHeader,
    jsonKeys: source.header,
    extraColumns: ['enrich_line'],
    recordKey: recordKeyOf(kind),
    jsonLine: true,
    formulaEscape: 'never',
    sheetName: 'Rejects',
    ...(dialect?.delimiter === undefined ? {} : { delimiter: dialect.delimiter }),
    bom: dialect?.bom ?? false,
    sepLine: dialect?.sepLine ?? false,
  });
  return {
    write: (row, v) =>
      writer.write({
        row: row.index + 1,
        input: row,
        status: 'invalid',
        error: invalidMessage(v),
        creditCharged: null,
        values: [row.line],
      }),
    close: () => writer.close(),
    abort: () => writer.abort(),
  };
}
