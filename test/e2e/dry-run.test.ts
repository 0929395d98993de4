import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * The cases run two at a time (`describe.concurrent`, at most 2 at once: more only share the
 * CPU): each has its own config, state and cache dirs, and writes only to a temp dir of its own.
 */
vi.setConfig({ maxConcurrency: 2 });

const fixtures = join(import.meta.dirname, '../../fixtures');
const json = (stdout: string) => JSON.parse(stdout) as Record<string, unknown>;

describe.concurrent('enrich contacts|companies --dry-run (e2e)', () => {
  it('contacts --json prints exactly the plan object; the mapping table goes to stderr', async () => {
    const r = await runCli(
      ['contacts', join(fixtures, 'contacts.csv'), '--dry-run', '--json', '--batch-size', '10'],
      { env: await tempEnv() },
    );
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toEqual({
      mapping: {
        business_email: 'Email',
        company_domain: 'Website',
        company_name: 'Company',
        first_name: 'First Name',
        last_name: 'Last Name',
        prof_network_url: 'LinkedIn URL',
      },
      rows: 25,
      valid: 23,
      invalid: 2,
      cached: 0,
      unconfirmed_earlier: 0,
      earlier_jobs: 0,
      duplicates: 2,
      sent: 21,
      over_budget: 0,
      batches: 3,
      max_credits: 21,
    });
    expect(r.stderr).toMatch(
      /^\s+business_email\s+Email\s+jane\.doe@acme\.com \| maria\.garcia@initech\.io/m,
    );
    expect(r.stderr).toContain('not sent: "Contact ID", "Title", "Phone", "Notes"');
  });

  it('human output: the plan on stdout', async () => {
    const r = await runCli(
      ['companies', join(fixtures, 'companies.csv'), '--dry-run', '--top', '2'],
      { env: await tempEnv() },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^rows\s+12$/m);
    expect(r.stdout).toMatch(/^duplicates\s+1 \(sent once\)$/m);
    expect(r.stdout).toMatch(/^max_credits\s+20 \(at most, for the rows sent\)$/m);
    expect(r.stderr).toMatch(/company_website\s+Website\s+https:\/\/www\.acme\.com/);
  });

  it('--max-credits: the plan is what a run with that limit sends, and the rows it leaves unsent', async () => {
    const env = await tempEnv();
    const contacts = [
      'contacts',
      join(fixtures, 'contacts.csv'),
      '--dry-run',
      '--batch-size',
      '10',
    ];
    const r = await runCli([...contacts, '--max-credits', '5', '--json'], { env });
    expect(r.code).toBe(0);
    // 21 rows to send; 5 fit; the other 16 and the duplicate of one of them end "failed".
    expect(json(r.stdout)).toMatchObject({ sent: 5, over_budget: 17, batches: 1, max_credits: 5 });
    expect(r.stderr).toContain('note: --max-credits 5 leaves 17 row(s) unsent');
    const text = await runCli([...contacts, '--max-credits', '5'], { env });
    expect(text.stdout).toMatch(/^sent\s+5 \(within --max-credits 5\)$/m);
    expect(text.stdout).toMatch(
      /^over_budget\s+17 \(not sent: past --max-credits 5; they end "failed", exit 5\)$/m,
    );
    expect(text.stdout).toMatch(/^batches\s+1 \(batch size 10\)$/m);
    expect(text.stdout).toMatch(/^max_credits\s+5 \(at most, for the rows sent\)$/m);
    // A limit the file fits in leaves nothing unsent.
    const roomy = await runCli([...contacts, '--max-credits', '100', '--json'], { env });
    expect(json(roomy.stdout)).toMatchObject({ sent: 21, over_budget: 0, max_credits: 21 });
    expect(roomy.stderr).not.toContain('note:');
    // Companies cost --top credits a row: 3 rows (9 credits) fit in 10.
    const companies = await runCli(
      [
        'companies',
        join(fixtures, 'companies.csv'),
        '--dry-run',
        '--top',
        '3',
        '--max-credits',
        '10',
        '--json',
      ],
      { env },
    );
    expect(json(companies.stdout)).toMatchObject({ sent: 3, over_budget: 7, max_credits: 9 });
  });

  it('reads stdin, splits a Name column, honours --map, and writes --rejects and --save-mapping', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-dry-'));
    const input =
      'Name;E-mail;Org\r\nJane Doe;jane@acme.com;Acme\r\nWei Chen;;Umbrella\r\nBad;;\r\n';
    const args = [
      'contacts',
      '-',
      '--dry-run',
      '--json',
      '--map',
      'company_name=Org',
      '--rejects',
      join(dir, 'rejects.csv'),
      '--save-mapping',
      join(dir, 'map.json'),
    ];
    const r = await runCli(args, { env: await tempEnv(), input });
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({
      mapping: {
        business_email: 'E-mail',
        company_name: 'Org',
        first_name: 'Name',
        last_name: 'Name',
      },
      rows: 3,
      valid: 2,
      invalid: 1,
    });
    expect(r.stderr).toMatch(/first_name\s+Name \(split\)\s+Jane \| Wei/);
    expect(r.stderr).toMatch(/last_name\s+Name \(split\)\s+Doe \| Chen/);
    // In the input's dialect (semicolons), as the output would be.
    const rejects = await readFile(join(dir, 'rejects.csv'), 'utf8');
    expect(rejects.split(/\r?\n/)[0]).toBe(
      'Name;E-mail;Org;enrich_status;enrich_error;enrich_credit_charged;enrich_cached_at;enrich_line',
    );
    expect(rejects).toContain('Bad;;;invalid;');
    expect(JSON.parse(await readFile(join(dir, 'map.json'), 'utf8'))).toEqual({
      business_email: 'E-mail',
      company_name: 'Org',
      first_name: 'Name',
      last_name: 'Name',
    });
  });

  it.each([
    [
      'inputs/excel-unicode.txt',
      {
        business_email: 'E-mail Address',
        company_name: 'Organization',
        first_name: 'Given Name',
        last_name: 'Surname',
      },
      1,
    ],
    [
      'inputs/preamble.csv',
      {
        business_email: 'Email',
        company_name: 'Company',
        first_name: 'First Name',
        last_name: 'Last Name',
      },
      2,
    ],
    [
      'inputs/contacts.json',
      { business_email: 'Email', first_name: 'First Name', last_name: 'Last Name' },
      2,
    ],
    [
      'inputs/contacts.jsonl',
      { business_email: 'email', company_name: 'company', first_name: 'first_name' },
      2,
    ],
  ])('%s: detected and mapped', async (file, mapping, rows) => {
    const r = await runCli(['contacts', join(fixtures, file), '--dry-run', '--json'], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ mapping, rows, invalid: 0 });
  });

  it('warns on stderr, even with --quiet, when a file read as Windows-1252 holds UTF-8 characters', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-dry-'));
    const file = join(dir, 'mixed.csv');
    // UTF-8 names, then (past the 64 KiB sample) one Windows-1252 byte.
    const head = Buffer.from(
      'email,first name,last name,company\n' + 'jo@acme.com,José,Ruiz,Acme\n'.repeat(3000),
    );
    await writeFile(file, Buffer.concat([head, Buffer.from('rene@x.co,Ren\xe9,R,X\n', 'latin1')]));
    const r = await runCli(['contacts', file, '--dry-run', '--json', '--quiet'], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^enrich: warning: .*mixed\.csv is not valid UTF-8 throughout/m);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3001 });
  });

  it('an ambiguous mapping is a usage error naming the candidates and the --map to use', async () => {
    const file = join(fixtures, 'inputs/duplicate-headers.csv');
    const names = await runCli(['contacts', file, '--dry-run'], { env: await tempEnv() });
    expect(names.stderr).toContain('"Name", "Name (2)"');
    const r = await runCli(['contacts', file, '--dry-run', '--map', 'full_name=Name'], {
      env: await tempEnv(),
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('"Email", "Email (2)"');
    expect(r.stderr).toContain('--map business_email="Email"');
    expect(r.stderr).toContain(`(${file}) [MAPPING_AMBIGUOUS]`);
  });

  it.each([
    [
      ['contacts', 'fixtures/inputs/nope.csv', '--dry-run'],
      /cannot read fixtures\/inputs\/nope\.csv: no such file.*\[INPUT_UNREADABLE\]/,
    ],
    [
      ['contacts', 'fixtures/inputs/unclosed-quote.csv', '--dry-run'],
      /never closed.*line 3.*\[INPUT_INVALID\]/,
    ],
    [
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '--batch-size', '0'],
      /--batch-size: expected an integer from 1 to 10000, got "0"/,
    ],
    [
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '--require-mobile'],
      /--require-mobile needs --mobile/,
    ],
    [
      ['companies', 'fixtures/companies.csv', '--dry-run', '--top', '11'],
      /--top: expected an integer from 1 to 10/,
    ],
    [
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '--formula-escape', 'sometimes'],
      /--formula-escape: expected one of auto, always, never/,
    ],
    [
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '--map', 'business_email=Nope'],
      /column "Nope".*\(fixtures\/contacts\.csv, column "Nope"\) \[MAPPING_INVALID\]/,
    ],
    [
      // A real run, not only the dry run, names the file (before any service is needed).
      ['contacts', 'fixtures/contacts.csv', '-o', 'never.csv', '--id-column', 'Nope'],
      /\(fixtures\/contacts\.csv, column "Nope"\) \[MAPPING_INVALID\]/,
    ],
    [
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '--id-column', 'Nope'],
      /\(fixtures\/contacts\.csv, column "Nope"\) \[MAPPING_INVALID\]\nhint: Give --id-column one of the columns above\./,
    ],
  ])('%j exits 2 with a clear message', async (args, message) => {
    const r = await runCli(args, { env: await tempEnv() });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
