import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { InputRow } from '../../src/io/read.js';
import { createBudget } from '../../src/pipeline/run/budget.js';
import {
  classifyRows,
  type BatchReady,
  type HitsSpan,
  type RowClass,
} from '../../src/pipeline/run/classify.js';
import { apartFromTheirShape } from '../helpers/hidden-class.js';

const header = ['Email'];
const run = (batchSize: number, dedupe = true) => ({
  kind: 'contacts' as const,
  mapping: { fields: { business_email: 0 } },
  validate: { header },
  dedupe,
  idColumn: undefined,
  batchSize,
});

async function* rowsOf(emails: string[]): AsyncGenerator<InputRow> {
  for (const [index, email] of emails.entries())
    yield { index, line: index + 2, cells: [email] } as InputRow;
}

async function classify(
  emails: string[],
  batchSize: number,
  state: Parameters<typeof classifyRows>[2] = {},
  dedupe = true,
) {
  const out: (RowClass | BatchReady | HitsSpan)[] = [];
  for await (const c of classifyRows(run(batchSize, dedupe), rowsOf(emails), state)) out.push(c);
  return out;
}

describe('classifyRows', () => {
  it('says what becomes of each row, and hands out each batch right after the row that filled it', async () => {
    const out = await classify(['a@x.io', '', 'b@x.io', 'A@x.io', 'c@x.io'], 2);
    expect(out.map((c) => (c.t === 'batch' ? `batch${c.no}:${c.items.length}` : c.t))).toEqual([
      'send',
      'invalid',
      'send',
      'batch0:2',
      'duplicate',
      'send',
      'batch1:1',
    ]);
    const dup = out.find((c) => c.t === 'duplicate') as Extract<RowClass, { t: 'duplicate' }>;
    expect(dup.of).toBe(0); // the key is normalised: the domain's case does not matter
    const batch = out[3] as BatchReady;
    expect(batch.paid).toBe(true);
    expect(batch.items.map((i) => i.element)).toEqual([
      { business_email: 'a@x.io', custom_fields: { enrich_row: 0 } },
      { business_email: 'b@x.io', custom_fields: { enrich_row: 2 } },
    ]);
  });

  it('sends every distinct valid row exactly once, in batches no larger than the size (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('a@x.io', 'b@x.io', 'c@y.io', 'd@y.io', '', 'bad'), {
          maxLength: 80,
        }),
        fc.integer({ min: 1, max: 9 }),
        async (emails, size) => {
          const out = await classify(emails, size);
          const batches = out.filter((c): c is BatchReady => c.t === 'batch');
          const sent = out
            .filter((c) => c.t === 'send')
            .map((c) => (c as { row: InputRow }).row.index);
          expect(batches.flatMap((b) => b.items.map((i) => i.index))).toEqual(sent);
          expect(batches.every((b) => b.items.length > 0 && b.items.length <= size)).toBe(true);
          expect(batches.map((b) => b.no)).toEqual(batches.map((_, i) => i));
          const rows = out.filter((c): c is RowClass => c.t !== 'batch');
          expect(rows.map((c) => c.row.index)).toEqual(emails.map((_, i) => i));
          const valid = emails.filter((_, i) => rows[i]?.t !== 'invalid');
          expect(sent.length).toBe(new Set(valid).size);
        },
      ),
    );
  });

  it('over the budget: rows are never sent, and what is sent fits it', async () => {
    const budget = createBudget(3, 1);
    const out = await classify(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io', 'a@x.io'], 10, { budget });
    expect(out.map((c) => c.t)).toEqual([
      'send',
      'send',
      'send',
      'over-budget',
      'duplicate',
      'batch',
    ]);
    expect(budget.left).toBe(0);
  });

  it('a resumed run rebuilds batches with the row counts its journal has, whose credits are taken later', async () => {
    const budget = createBudget(1, 1);
    const journaledCount = (no: number) => (no === 0 ? 3 : undefined);
    const out = await classify(['a@x.io', 'b@x.io', 'c@x.io', 'd@x.io'], 2, {
      budget,
      journaledCount,
    });
    const batches = out.filter((c): c is BatchReady => c.t === 'batch');
    expect(batches.map((b) => [b.items.length, b.paid])).toEqual([
      [3, false],
      [1, true],
    ]);
    expect(budget.left).toBe(0); // only the new batch's row took its credit here
  });

  it('without dedupe, identical rows are each sent', async () => {
    const out = await classify(['a@x.io', 'a@x.io'], 5, {}, false);
    expect(out.map((c) => c.t)).toEqual(['send', 'send', 'batch']);
  });
});

describe('the request elements classifyRows builds', () => {
  it('share one hidden class per set of fields (Node 20 gave thousands of spread copies a class each)', async () => {
    const fields = { first_name: 0, last_name: 1, business_email: 2, company_name: 3 };
    const mapping = { fields: { ...fields, company_domain: 4, prof_network_url: 5 } };
    const many = { ...run(1000), mapping, validate: { header: ['F', 'L', 'E', 'C', 'D', 'P'] } };
    async function* rows(): AsyncGenerator<InputRow> {
      for (let i = 0; i < 40_000; i++) {
        const cells = [`F${i}`, `L${i}`, i % 3 ? `p${i}@x${i % 7}.io` : '', `Co ${i}`];
        cells.push(i % 5 ? `x${i}.io` : '', i % 4 ? `https://net.example/in/p${i}` : '');
        yield { index: i, line: i + 2, cells } as InputRow;
      }
    }
    const elements: Record<string, unknown>[] = [];
    for await (const c of classifyRows(many, rows()))
      if (c.t === 'batch') elements.push(...c.items.map((i) => i.element));
    expect(new Set(elements.map((e) => Object.keys(e).join())).size).toBe(8);
    expect(apartFromTheirShape(elements)).toEqual([]);
  });
});
