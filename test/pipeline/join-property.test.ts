import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openInput } from '../../src/io/read.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import { runBulk } from '../../src/pipeline/run/run.js';
import { tempDir } from '../integration/bulk-harness.js';

/** What the fake service does with one record of a batch. */
type Fate = 'ok' | 'drop' | 'twice' | 'error' | 'no-custom-fields';

const rowArb = fc.record({
  // A small pool of emails makes duplicates likely; '' makes some rows invalid.
  email: fc.constantFrom('', 'a@x.io', 'b@x.io', 'c@x.io', 'd@x.io', 'e@x.io', 'f@x.io', 'g@x.io'),
  note: fc.string({ maxLength: 6 }),
});

/**
 * A fake bulk service with hostile behaviour: per record it may drop it, send it
 * twice, send an error, or omit custom_fields; every batch is shuffled and carries
 * a record for a row it never sent.
 */
function fakeService(fates: Fate[], seed: number): BulkApi {
  const jobs = new Map<string, Record<string, unknown>[]>();
  let next = 0;
  let fateAt = 0;
  let rand = seed;
  const random = () => (rand = (rand * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return {
    async submit(_kind, body) {
      const id = `job-${next++}`;
      const records: Record<string, unknown>[] = [];
      for (const item of body.items as Record<string, unknown>[]) {
        const fate = fates[fateAt++ % fates.length] ?? 'ok';
        const { custom_fields, ...original } = item;
        const rec = {
          error: '',
          credit_charged: true,
          email: `echo:${String(item.business_email)}`,
          source_row: (custom_fields as { enrich_row: number }).enrich_row,
          custom_fields,
          original_fields: original,
        };
        if (fate === 'drop') continue;
        if (fate === 'error')
          records.push({ ...rec, error: 'No match found', credit_charged: false, email: '' });
        else if (fate === 'no-custom-fields') records.push({ ...rec, custom_fields: undefined });
        else records.push(rec);
        if (fate === 'twice') records.push(rec);
      }
      records.push({ error: '', email: 'echo:stranger', custom_fields: { enrich_row: 999_999 } });
      records.sort(() => random() - 0.5);
      jobs.set(id, records);
      return { job_id: id, download_url: `http://fake/${id}`, expiration_date: 4_000_000_000 };
    },
    async results(_kind, jobId) {
      return { state: 'done', records: jobs.get(jobId) ?? [], remainingCredits: 1 };
    },
  };
}

describe('the join (property)', () => {
  it('never loses, duplicates or misattributes a row, whatever the service does', async () => {
    const dir = await tempDir('enrich-prop-');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom<Fate>('ok', 'ok', 'drop', 'twice', 'error', 'no-custom-fields'), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 1000 }),
        // A tiny window that spills at once: the trailing pass (and, past `keepOutcomes`, the
        // last pass) write the rows instead of the window, byte for byte the same.
        fc.record({
          windowRows: fc.integer({ min: 1, max: 4 }),
          keepOutcomes: fc.integer({ min: 1, max: 3 }),
        }),
        async (rows, fates, batchSize, dedupe, seed, spill) => {
          const run = join(dir, `p${n++}`);
          const file = `${run}.csv`;
          const csv =
            ['Email,Note', ...rows.map((r) => `${r.email},"${r.note.replace(/"/g, '""')}"`)].join(
              '\n',
            ) + '\n';
          await writeFile(file, csv);
          const runOnce = async (
            at: string,
            joinOptions?: typeof spill & { headWaitMs: number },
          ) => {
            const source = await openInput(file);
            const resolved = await resolveRun(
              {
                kind: 'contacts',
                mapping: { map: { business_email: 'Email' } },
                batchSize,
                concurrency: 2,
                dedupe,
                timeoutMs: 60_000,
                runsDir: at,
                command: 'test',
                output: `${at}.jsonl`,
                formulaEscape: 'never',
              },
              source,
            );
            const summary = await runBulk(resolved, {
              baseUrl: 'http://fake',
              api: fakeService(fates, seed),
              env: { now: Date.now, sleep: async () => {}, random: () => 0.5 },
              ...(joinOptions ? { join: joinOptions } : {}),
            });
            await source.close();
            return { summary, text: await readFile(`${at}.jsonl`, 'utf8') };
          };
          const { summary, text } = await runOnce(run);
          const spilled = await runOnce(`${run}-s`, { ...spill, headWaitMs: 0 });
          expect(spilled.text).toBe(text);
          expect(spilled.summary.statuses).toEqual(summary.statuses);
          const out = text
            .trim()
            .split('\n')
            .map(
              (l) =>
                JSON.parse(l) as {
                  row: number;
                  input: { Email: string; Note: string };
                  status: string;
                  record: { email?: string; source_row?: number; custom_fields?: unknown } | null;
                },
            );
          // Every row once, in order, with its own cells.
          expect(out.map((o) => o.row)).toEqual(rows.map((_, i) => i + 1));
          expect(out.map((o) => o.input.Email)).toEqual(rows.map((r) => r.email));
          const taken = new Set<number>();
          for (const [i, o] of out.entries()) {
            const email = rows[i]?.email ?? '';
            if (email === '') expect(o.status).toBe('invalid');
            // A record is only ever the one made for this row's own input.
            if (o.status === 'enriched') {
              expect(o.record?.email).toBe(`echo:${email}`);
              // Without dedupe every row was sent itself: its record is the one made for it, or,
              // when it came without its row id, one made for an identical request (they cannot
              // be told apart); never one another row took.
              if (!dedupe) {
                const source = o.record?.source_row as number;
                if (o.record?.custom_fields !== undefined) expect(source).toBe(i);
                else expect(rows[source]?.email).toBe(email);
                expect(taken.has(source)).toBe(false);
                taken.add(source);
              }
            } else expect(['invalid', 'failed', 'missing']).toContain(o.status);
          }
          expect(summary.rows).toBe(rows.length);
          await rm(run, { recursive: true, force: true });
          await rm(`${run}-s`, { recursive: true, force: true });
        },
      ),
      { numRuns: 60 },
    );
  });
});

/**
 * A fake companies service: `top` matches per company (named `<website>#<rank>`), each
 * without its custom_fields by chance (found again by its original_fields echo), the whole
 * answer shuffled. The order the matches of one company keep in the answer is their rank.
 */
function topService(top: number, dropRate: number, seed: number) {
  const jobs = new Map<string, Record<string, unknown>[]>();
  let next = 0;
  let rand = seed;
  const random = () => (rand = (rand * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const api: BulkApi = {
    async submit(_kind, body) {
      const id = `job-${next++}`;
      const records: Record<string, unknown>[] = [];
      for (const item of body.items as Record<string, unknown>[]) {
        const { custom_fields, ...original } = item;
        for (let k = 1; k <= top; k++)
          records.push({
            error: '',
            credit_charged: true,
            name: `${String(item.company_website)}#${k}`,
            ...(random() < dropRate ? {} : { custom_fields }),
            original_fields: original,
          });
      }
      records.sort(() => random() - 0.5);
      jobs.set(id, records);
      return { job_id: id, download_url: `http://fake/${id}`, expiration_date: 4_000_000_000 };
    },
    async results(_kind, jobId) {
      return { state: 'done', records: jobs.get(jobId) ?? [], remainingCredits: 100 };
    },
  };
  return { api, answers: () => [...jobs.values()].flat() };
}

describe('the join of --top matches (property)', () => {
  it('keeps every paid match of a company, in the order the service gave them, whatever lost its custom_fields', async () => {
    const dir = await tempDir('enrich-prop-top-');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(0, 0.3, 1),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 1000 }),
        async (ids, top, dropRate, batchSize, seed) => {
          const run = join(dir, `t${n++}`);
          const file = `${run}.csv`;
          await writeFile(file, ['Website', ...ids.map((i) => `c${i}.example`)].join('\n') + '\n');
          const source = await openInput(file);
          const service = topService(top, dropRate, seed);
          const resolved = await resolveRun(
            {
              kind: 'companies',
              mapping: { map: { company_website: 'Website' } },
              request: { top },
              batchSize,
              concurrency: 2,
              timeoutMs: 60_000,
              runsDir: run,
              command: 'test',
              output: `${run}.csv`.replace(/\.csv$/, '-out.csv'),
              formulaEscape: 'never',
            },
            source,
          );
          const summary = await runBulk(resolved, {
            baseUrl: 'http://fake',
            api: service.api,
            env: { now: Date.now, sleep: async () => {}, random: () => 0.5 },
          });
          await source.close();
          expect(summary.creditsCharged).toBe(ids.length * top);
          const [header, ...out] = (await readFile(`${run}-out.csv`, 'utf8'))
            .trim()
            .split('\n')
            .map((l) => l.split(','));
          const names = [
            'enriched_name',
            ...[2, 3, 4].slice(0, top - 1).map((k) => `enriched_name_${k}`),
          ];
          const cols = names.map((c) => header!.indexOf(c));
          expect(cols.every((c) => c > 0)).toBe(true);
          const answered = service.answers().map((r) => String(r.name));
          for (const [i, row] of out.entries()) {
            const site = `c${ids[i]}.example`;
            // Every match, in the order of the answer (its rank there), none from another row.
            const expected = answered.filter((name) => name.startsWith(`${site}#`));
            expect(cols.map((c) => row[c])).toEqual(expected);
          }
          await rm(run, { recursive: true, force: true });
        },
      ),
      { numRuns: 40 },
    );
  });
});
