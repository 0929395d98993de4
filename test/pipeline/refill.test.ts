import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { findGone, planRefill, refillId, type RefillRow } from '../../src/pipeline/run/refill.js';

const header = ['Email'];
const run = (emails: string[]) => ({
  kind: 'contacts' as const,
  mapping: { fields: { business_email: 0 } },
  validate: { header },
  idColumn: undefined,
  source: {
    async *rows(): AsyncGenerator<InputRow> {
      for (const [index, email] of emails.entries())
        yield { index, line: index + 2, cells: [email] } as InputRow;
    },
  },
});

const row = (index: number): RefillRow => ({
  row: { index, line: index + 2, cells: [`r${index}@x.io`] } as InputRow,
  item: { index, element: {}, key: `k${index}` },
});

describe('findGone', () => {
  const emails = ['a@x.io', 'b@x.io', 'c@x.io', 'b@x.io', 'd@x.io', 'e@x.io', 'f@x.io'];
  it('takes the rows of the journaled hits whose answer is not in the cache (one per key), and rebuilds the journaled refill rows whatever the cache holds', async () => {
    const hits = {
      upTo: 5,
      ranges: [
        [1, 1],
        [3, 5],
      ] as [number, number][],
    };
    // Only e@x.io's answer is still in the cache.
    const any = (key: string) =>
      key.includes('e@x.io') ? { records: [], at: 0, charged: false } : undefined;
    const { listed, gone } = await findGone(run(emails), hits, new Set([4]), { any });
    expect([...listed.keys()]).toEqual([4]);
    // Row 0 and 2 were sent (not hits), 5 is still cached, 3 is row 1's request again, 6 is past upTo.
    expect(gone.map((g) => g.item.index)).toEqual([1]);
    expect(gone[0]?.item.element).toMatchObject({ business_email: 'b@x.io' });
    expect(gone[0]?.item.element).toHaveProperty('custom_fields');
  });

  it('reads nothing past the last row the earlier attempts classified', async () => {
    let read = 0;
    const counted = run(emails);
    const rows = counted.source.rows;
    counted.source.rows = async function* () {
      for await (const r of rows()) {
        read++;
        yield r;
      }
    };
    await findGone(counted, { upTo: 1, ranges: [[0, 1]] }, new Set(), { any: () => undefined });
    expect(read).toBe(3); // rows 0 and 1, and row 2 that ends the read
  });
});

describe('planRefill', () => {
  it('rebuilds the journaled batches from their rows, then cuts the new rows into batches numbered after them', () => {
    const listed = new Map([2, 7].map((i) => [i, row(i)]));
    const plan = planRefill([{ batch: 'g1', rows: [2, 7] }], listed, [1, 3, 5, 9, 11].map(row), {
      batchSize: 2,
      fit: Infinity,
    });
    expect(plan.batches.map((b) => [b.id, b.journaled, b.rows.map((r) => r.item.index)])).toEqual([
      ['g1', true, [2, 7]],
      ['g2', false, [1, 3]],
      ['g3', false, [5, 9]],
      ['g4', false, [11]],
    ]);
    expect(plan.over).toEqual([]);
  });

  it('sends only the rows --max-credits still pays for; the rest are over', () => {
    const plan = planRefill([], new Map(), [1, 3, 5].map(row), { batchSize: 10, fit: 2 });
    expect(plan.batches.map((b) => b.rows.map((r) => r.item.index))).toEqual([[1, 3]]);
    expect(plan.over.map((r) => r.item.index)).toEqual([5]);
    expect(planRefill([], new Map(), [row(1)], { batchSize: 10, fit: 0 }).batches).toEqual([]);
  });

  it('names refill batches apart from the classification batches (numbers) and their parts', () => {
    expect(refillId(1)).toBe('g1');
    expect(refillId(12)).not.toMatch(/^\d+$/);
  });
});
