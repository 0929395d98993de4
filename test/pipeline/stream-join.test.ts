import { describe, expect, it } from 'vitest';
import type { InputRow, InputSource } from '../../src/io/read.js';
import type { JoinWriter } from '../../src/pipeline/join/join-writer.js';
import { RowIndex } from '../../src/pipeline/join/row-index.js';
import { createStreamJoin } from '../../src/pipeline/join/stream-join.js';

const row = (index: number): InputRow => ({ index, line: index + 2, cells: [`r${index}`] });

/** A writer that records what it is given and fails from the `failAt`-th row on. */
function fakeWriter(failAt = Infinity) {
  const rows: { index: number; status: string }[] = [];
  const stats = { statuses: {}, fill: {}, outputRows: 0 } as unknown as Awaited<
    ReturnType<JoinWriter['close']>
  >;
  const put = async (r: InputRow, status: string) => {
    await Promise.resolve();
    if (rows.length >= failAt) throw new Error('ENOSPC: no space left on device');
    rows.push({ index: r.index, status });
  };
  const writer: JoinWriter = {
    write: (r, outcome) => put(r, outcome.status),
    writeInvalid: (r) => put(r, 'invalid'),
    close: async () => stats,
    abort: async () => undefined,
  };
  return { writer, rows };
}

function join(writer: JoinWriter) {
  const source = { rows: () => [] } as unknown as InputSource;
  return createStreamJoin(
    {
      kind: 'contacts',
      mapping: {} as never,
      validate: { header: [] },
      dedupe: true,
      journalDir: '/nonexistent',
      reps: new RowIndex(),
      source,
    },
    writer,
    { windowRows: 100, keepOutcomes: 10, headWaitMs: 0 },
  );
}

const invalid = { ok: false as const, error: 'no identifier', column: undefined };

describe('createStreamJoin', () => {
  it('writes rows in order as soon as each one can be written', async () => {
    const { writer, rows } = fakeWriter();
    const j = join(writer);
    for (let i = 0; i < 5; i++) j.invalid(row(i), invalid);
    await j.room();
    await new Promise((r) => setTimeout(r, 0));
    expect(rows.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(j.spilled).toBe(false);
  });

  it('a writer that fails stops the run with its error instead of retrying the row forever', async () => {
    const { writer, rows } = fakeWriter(3);
    const j = join(writer);
    let thrown: unknown;
    try {
      for (let i = 0; i < 1000 && thrown === undefined; i++) {
        j.invalid(row(i), invalid);
        await new Promise((r) => setTimeout(r, 0));
      }
    } catch (err) {
      thrown = err;
    }
    expect(String(thrown)).toMatch(/ENOSPC/);
    expect(rows).toHaveLength(3);
    await expect(
      j.finish({ leaves: [], dupCounts: new Map(), notSent: 'not sent' }),
    ).rejects.toThrow(/ENOSPC/);
  });
});
