import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInput, type InputSource } from '../../src/io/read.js';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import { resolveMapping } from '../../src/pipeline/mapping/resolve-mapping.js';
import { planBulk } from '../../src/pipeline/run/plan.js';
import type { BulkKind } from '../../src/pipeline/types.js';
import type { BatchState, RunState } from '../../src/pipeline/journal/journal.js';
import type { EnrichError } from '../../src/errors.js';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';

/** The dry run's plan of `source`, resolved the way every run is. */
async function planOf(
  source: InputSource,
  o: {
    kind: BulkKind;
    batchSize?: number;
    dedupe?: boolean;
    rejects?: string;
    topMatches?: number;
    idColumn?: string;
    maxCredits?: number;
    map?: Record<string, string>;
    mappingFile?: string;
    saveMapping?: string;
  },
) {
  const { kind, batchSize, dedupe, rejects, topMatches, idColumn, maxCredits, ...mapping } = o;
  const run = await resolveRun(
    {
      kind,
      output: '-',
      batchSize,
      dedupe,
      rejects,
      idColumn,
      maxCredits,
      request: { top: topMatches },
      mapping,
    },
    source,
  );
  return planBulk(run);
}

const fixtures = join(import.meta.dirname, '../../fixtures');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-plan-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function withSource<T>(path: string, fn: (s: InputSource) => Promise<T>): Promise<T> {
  const source = await openInput(path);
  try {
    return await fn(source);
  } finally {
    await source.close();
  }
}

describe('planBulk on fixtures/contacts.csv', () => {
  it('counts rows, invalid rows, duplicates, batches and worst-case credits', async () => {
    const plan = await withSource(join(fixtures, 'contacts.csv'), (s) =>
      planOf(s, { kind: 'contacts', batchSize: 10 }),
    );
    expect(plan.names).toEqual({
      business_email: 'Email',
      company_domain: 'Website',
      company_name: 'Company',
      first_name: 'First Name',
      last_name: 'Last Name',
      prof_network_url: 'LinkedIn URL',
    });
    expect({
      rows: plan.rows,
      valid: plan.valid,
      invalid: plan.invalid,
      duplicates: plan.duplicates,
      batches: plan.batches,
      max_credits: plan.max_credits,
    }).toEqual({
      rows: 25,
      valid: 23,
      invalid: 2,
      duplicates: 2,
      batches: 3,
      max_credits: 21,
    });
    expect(plan.samples.business_email).toEqual([
      'jane.doe@acme.com',
      'maria.garcia@initech.io',
      'wei.chen@umbrella.co',
    ]);
  });

  it('--no-dedupe plans every valid row', async () => {
    const plan = await withSource(join(fixtures, 'contacts.csv'), (s) =>
      planOf(s, { kind: 'contacts', dedupe: false }),
    );
    expect([plan.duplicates, plan.max_credits, plan.batches]).toEqual([0, 23, 1]);
  });

  it('--rejects writes the invalid rows, every input column kept, with reason and line', async () => {
    const rejects = join(dir, 'rejects.csv');
    await withSource(join(fixtures, 'contacts.csv'), (s) =>
      planOf(s, { kind: 'contacts', rejects }),
    );
    const lines = (await readFile(rejects, 'utf8')).trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Contact ID,First Name,Last Name,Email,Company,Website,Title,LinkedIn URL,Phone,Notes,enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enrich_line',
    );
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['C-1007', 'C-1014']);
    expect(lines[1]).toContain(
      ',invalid,needs at least one of: prof_network_url; business_email; first_name + last_name + company_domain; first_name + last_name + company_name,,,8',
    );
  });

  it('--rejects in JSON: a company row says records, as the output does (regression: record)', async () => {
    const lines = async (kind: BulkKind, input: string) => {
      const rejects = join(dir, `rejects-${kind}.jsonl`);
      await withSource(join(fixtures, input), (s) => planOf(s, { kind, rejects }));
      return (await readFile(rejects, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    const companies = await lines('companies', 'companies.csv');
    expect(companies).toHaveLength(1);
    expect(companies[0]).toMatchObject({ status: 'invalid', records: [] });
    expect(companies[0]).not.toHaveProperty('record');
    const contacts = await lines('contacts', 'contacts.csv');
    expect(contacts).toHaveLength(2);
    expect(contacts[0]).toMatchObject({ status: 'invalid', record: null });
    expect(contacts[0]).not.toHaveProperty('records');
  });

  it('companies: credits scale with --top', async () => {
    const plan = await withSource(join(fixtures, 'companies.csv'), (s) =>
      planOf(s, { kind: 'companies', topMatches: 3 }),
    );
    expect(plan.names).toEqual({ company_name: 'Account Name', company_website: 'Website' });
    expect([
      plan.rows,
      plan.valid,
      plan.invalid,
      plan.duplicates,
      plan.batches,
      plan.max_credits,
    ]).toEqual([12, 11, 1, 1, 1, 30]);
  });

  it('maxCredits: the plan counts what the run sends within it, and the rows it leaves unsent', async () => {
    const counts = (p: Awaited<ReturnType<typeof planOf>>) => [
      p.sent,
      p.over_budget,
      p.batches,
      p.max_credits,
    ];
    const contacts = (maxCredits?: number) =>
      withSource(join(fixtures, 'contacts.csv'), (s) =>
        planOf(s, { kind: 'contacts', batchSize: 10, maxCredits }),
      );
    // Without a limit: 21 distinct rows sent in 3 batches, none left.
    expect(counts(await contacts())).toEqual([21, 0, 3, 21]);
    // 5 rows within the limit (one batch); the other 16 distinct rows and the duplicate of one
    // of them end "failed", not sent (a real run's output says the same: spend-limit.test.ts).
    expect(counts(await contacts(5))).toEqual([5, 17, 1, 5]);
    // Nothing fits: every valid row, duplicates included, is left unsent.
    expect(counts(await contacts(0))).toEqual([0, 23, 0, 0]);
    expect(counts(await contacts(21))).toEqual([21, 0, 3, 21]);
    // Companies cost --top credits a row: --top 3 --max-credits 10 sends 3 rows (9 credits).
    const companies = await withSource(join(fixtures, 'companies.csv'), (s) =>
      planOf(s, { kind: 'companies', topMatches: 3, maxCredits: 10 }),
    );
    expect(counts(companies)).toEqual([3, 7, 1, 9]);
  });

  it('resuming a journal: each batch counted by what the resume does with it (answered, in a job, unconfirmed, expired, sent again), in parts after a split', async () => {
    const batch = (id: string, count: number, more: Partial<BatchState> = {}): BatchState => ({
      id,
      first: 0,
      last: 0,
      count,
      idem: `idem-${id}`,
      ...more,
    });
    const spooled = { records: 5, credits: 5, remaining: 100, creditError: false, unsure: false };
    const state = (batches: BatchState[]): RunState => ({
      header: {
        t: 'run',
        v: 1,
        run: 'k',
        nonce: 'n',
        kind: 'contacts',
        input: { path: 'contacts.csv', sha256: 'x', size: 1 } as RunState['header']['input'],
        options: {},
        command: 'enrich contacts contacts.csv',
        at: Date.parse('2026-12-01T10:00:00Z'),
      },
      batches: new Map(batches.map((b) => [b.id, b])),
    });
    const plan = (s: RunState, mayResend: boolean, maxCredits?: number) =>
      withSource(join(fixtures, 'contacts.csv'), async (source) => {
        const run = await resolveRun(
          { kind: 'contacts', output: '-', batchSize: 10, maxCredits },
          source,
        );
        return planBulk(run, { resume: { state: s, mayResend } });
      });
    // 21 distinct rows in batches of 10, 10 and 1. Batch 0 was split in two parts of 5: the
    // first answered, the second never journaled (sent again); batch 1's POST got no answer;
    // batch 2 is new to the journal.
    const journal = state([
      batch('0', 10, { splitSize: 5 }),
      batch('0.0', 5, { job: 'j0', url: 'u', spooled }),
      batch('1', 10, { unconfirmed: { message: 'socket hang up' } }),
    ]);
    const p = await plan(journal, false);
    expect([p.sent, p.batches, p.max_credits, p.over_budget, p.cached]).toEqual([6, 2, 6, 0, 0]);
    expect(p.resume).toEqual({
      startedAt: Date.parse('2026-12-01T10:00:00Z'),
      finished: false,
      answered: 5,
      inJobs: 0,
      unconfirmed: 10,
      expired: 0,
      resent: 5,
    });
    // Sending unconfirmed batches again is safe (--resend-unconfirmed, or a service that
    // honours idempotency keys): batch 1 is sent again too.
    const resend = await plan(journal, true);
    expect([resend.sent, resend.batches, resend.max_credits]).toEqual([16, 3, 16]);
    expect(resend.resume).toMatchObject({ unconfirmed: 0, resent: 15 });
    // A job accepted is downloaded, one expired ends "expired": neither is sent or paid again.
    const jobs = await plan(
      state([
        batch('0', 10, { job: 'j0', url: 'u' }),
        batch('1', 10, { job: 'j1', url: 'u', expired: true }),
        batch('2', 1, { job: 'j2', url: 'u', spooled: { ...spooled, records: 1, credits: 1 } }),
      ]),
      false,
    );
    expect([jobs.sent, jobs.batches, jobs.max_credits]).toEqual([0, 0, 0]);
    expect(jobs.resume).toMatchObject({ inJobs: 10, expired: 10, answered: 1, resent: 0 });
    // A batch sent again takes its credits all or none, before its POST: past --max-credits
    // 3 the second part of batch 0 (5 rows) is not sent; batch 2's one row is.
    const capped = await plan(journal, false, 3);
    expect([capped.sent, capped.batches, capped.over_budget]).toEqual([1, 1, 5]);
  });

  it('ragged rows are counted invalid, never fatal', async () => {
    const plan = await withSource(join(fixtures, 'inputs/ragged.csv'), (s) =>
      planOf(s, { kind: 'contacts' }),
    );
    expect([plan.rows, plan.valid, plan.invalid]).toEqual([4, 2, 2]);
  });

  it('--id-column must name a column', async () => {
    await expect(
      withSource(join(fixtures, 'contacts.csv'), (s) =>
        planOf(s, { kind: 'contacts', idColumn: 'Nope' }),
      ),
    ).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
  });
});

describe('resolveMapping', () => {
  it('--save-mapping then --mapping reproduces the mapping; --map overrides the file', async () => {
    const file = join(dir, 'map.json');
    const saved = await withSource(join(fixtures, 'contacts.csv'), (s) =>
      resolveMapping(s, { kind: 'contacts', map: { prof_network_url: '' }, saveMapping: file }),
    );
    expect(saved.names.prof_network_url).toBeUndefined();
    const loaded = await withSource(join(fixtures, 'contacts.csv'), (s) =>
      resolveMapping(s, { kind: 'contacts', mappingFile: file, map: { company_domain: '' } }),
    );
    const { company_domain: _dropped, ...rest } = saved.names;
    expect(loaded.names).toEqual(rest);
  });

  it('a --mapping file whose columns are gone fails loudly', async () => {
    const file = join(dir, 'map2.json');
    await withSource(join(fixtures, 'contacts.csv'), (s) =>
      resolveMapping(s, { kind: 'contacts', saveMapping: file }),
    );
    await expect(
      withSource(join(fixtures, 'inputs/comma.csv'), (s) =>
        resolveMapping(s, { kind: 'contacts', mappingFile: file }),
      ),
    ).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
  });

  it('a `key,value` note the header detection took for the header: the hint names the line that reads as one', async () => {
    const path = join(dir, 'kv-note.csv');
    await writeFile(path, 'Exported on:,2024-03-01\nEmail,Company\na@acme.com,Acme\n');
    const failure = (file: string, o: Omit<Parameters<typeof resolveMapping>[1], 'kind'> = {}) =>
      withSource(file, (s) => resolveMapping(s, { kind: 'contacts', ...o })).then(
        () => {
          throw new Error(`${file} was mapped`);
        },
        (e: unknown) => e as EnrichError,
      );
    expect(await failure(path)).toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringContaining('the input\'s columns are: "Exported on:", "2024-03-01"'),
      hint: expect.stringMatching(
        /^Line 2 reads as the header: run again with headerRow 2\. Say which column/,
      ),
      details: { headerRow: 2 },
      location: { file: path },
    });
    // The CLI names its flag; a mapping given by hand gets no such guess.
    expect((await failure(path, { words: CLI_WORDS })).hint).toMatch(
      /^Line 2 reads as the header: run again with --header-row 2\./,
    );
    const byHand = await failure(path, { map: { company_name: 'Exported on:' } });
    expect(byHand.hint).not.toMatch(/reads as the header/);
    // No line reads as a header: the hint is detection's own.
    const none = join(dir, 'no-header.csv');
    await writeFile(none, 'a,b\nx,y\n');
    expect((await failure(none)).hint).toMatch(/^Say which column holds what/);
  });
});

describe('an input with no rows (a nightly export with nothing new)', () => {
  const input = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };

  it.each([
    ['empty.json', '[]\n'],
    ['blank.jsonl', '\n\n'],
    ['nothing.jsonl', ''],
    ['unnamed-header-only.csv', 'a,b\r\n'],
  ])('%s: nothing to send, so no mapping is needed', async (name, text) => {
    const path = await input(name, text);
    const plan = await withSource(path, (s) =>
      planOf(s, { kind: 'contacts', idColumn: undefined }),
    );
    expect(plan.names).toEqual({});
    expect([plan.rows, plan.valid, plan.batches, plan.max_credits]).toEqual([0, 0, 0, 0]);
  });

  it('a header-only CSV keeps what --map says when detection finds too little', async () => {
    const path = await input('partly-named.csv', 'Given,Family,Notes\r\n');
    const plan = await withSource(path, (s) =>
      planOf(s, { kind: 'contacts', map: { first_name: 'Given', last_name: 'Family' } }),
    );
    expect(plan.names).toEqual({ first_name: 'Given', last_name: 'Family' });
    expect(plan.rows).toBe(0);
  });

  it('a header-only CSV still maps what its header names', async () => {
    const path = await input('named-header-only.csv', 'Email,First Name\r\n');
    const resolved = await withSource(path, (s) => resolveMapping(s, { kind: 'contacts' }));
    expect(resolved.names).toEqual({ business_email: 'Email', first_name: 'First Name' });
  });

  it('JSON without records has no columns to check --map, --mapping or --id-column against', async () => {
    const path = await input('empty2.json', '[]');
    const mappingFile = join(dir, 'empty-map.json');
    await writeFile(mappingFile, JSON.stringify({ business_email: 'Email' }));
    const plan = await withSource(path, (s) =>
      planOf(s, {
        kind: 'contacts',
        mappingFile,
        map: { company_name: 'Account' },
        idColumn: 'Contact ID',
      }),
    );
    expect([plan.rows, plan.max_credits]).toEqual([0, 0]);
  });

  it('a column a known header lacks, or an unknown field, is still an error', async () => {
    const csv = await input('renamed.csv', 'Work Email,Name\r\n');
    await expect(
      withSource(csv, (s) =>
        resolveMapping(s, { kind: 'contacts', map: { business_email: 'Email' } }),
      ),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringMatching(/mapped to column "Email", which the input does not have/),
      location: { file: csv },
    });
    await expect(
      withSource(csv, (s) => planOf(s, { kind: 'contacts', idColumn: 'Contact ID' })),
    ).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
    const json = await input('empty3.json', '[]');
    await expect(
      withSource(json, (s) =>
        resolveMapping(s, {
          kind: 'contacts',
          map: { business_email: 'Email', e_mail: 'Email' },
        }),
      ),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringMatching(/unknown field "e_mail"/),
    });
  });

  it('--save-mapping refuses to save a mapping it could not find', async () => {
    const saveMapping = join(dir, 'never.json');
    const json = await input('empty4.json', '[]');
    await expect(
      withSource(json, (s) => resolveMapping(s, { kind: 'contacts', saveMapping })),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringMatching(/has no records, so no columns to map/),
    });
    const csv = await input('unnamed2.csv', 'a,b\r\n');
    await expect(
      withSource(csv, (s) => resolveMapping(s, { kind: 'contacts', saveMapping })),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringMatching(/"a", "b"/),
    });
    await expect(readFile(saveMapping)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
