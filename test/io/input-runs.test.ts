import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { parseCsv, runFile, sandboxPerTest, tempDir } from '../integration/bulk-harness.js';

// Exporter quirks taken through a whole bulk run against a sandbox on 127.0.0.1, port 0.
const sandbox = sandboxPerTest();

describe('a trailing delimiter on every data row (a,b,c,d over 1,2,3,4,)', () => {
  it('enriches the rows, written back with the header width', async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const file = join(dir, 'trailing.csv');
    await writeFile(
      file,
      'Email,First Name,Last Name,Company\r\n' +
        'jo@acme.com,Jo,Doe,Acme,\r\n' +
        'al@acme.com,Al,Bo,Acme,\r\n' +
        'mia@acme.com,Mia,Ray,Acme,left over\r\n',
    );
    const { summary, output } = await runFile(s, file, { runsDir: dir });
    const out = parseCsv(output);
    expect(out.slice(1).map((r) => r.slice(0, 6))).toEqual([
      ['jo@acme.com', 'Jo', 'Doe', 'Acme', 'enriched', ''],
      ['al@acme.com', 'Al', 'Bo', 'Acme', 'enriched', ''],
      [
        'mia@acme.com',
        'Mia',
        'Ray',
        'Acme',
        'invalid',
        'expected 4 cells, got 5 (extra: "left over")',
      ],
    ]);
    expect(summary.statuses).toMatchObject({ enriched: 2, invalid: 1 });
    expect(s.admin.stats().records_submitted).toBe(2);
  });
});

describe('an input with no rows, e.g. a nightly export with nothing new (e2e)', () => {
  beforeAll(ensureBuilt, 120_000);

  const enrich = async (s: SandboxHandle, name: string, text: string, args: string[]) => {
    const dir = await tempDir();
    await writeFile(join(dir, name), text);
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
    const r = await runCli(['contacts', join(dir, name), ...args.map((a) => a.replace('@', dir))], {
      env,
    });
    return { ...r, dir };
  };
  const statusColumns =
    'enrich_status,enrich_error,enrich_credit_charged,enrich_cached_at,enriched_email,';

  it.each([
    ['empty.json', '[]\n', 'out.json', (out: string) => expect(out).toBe('[]\n')],
    ['blank.jsonl', '\n\n', 'out.jsonl', (out: string) => expect(out).toBe('')],
    ['empty.jsonl', '', 'out.jsonl', (out: string) => expect(out).toBe('')],
    [
      'empty.json',
      '[]',
      'out.csv',
      (out: string) => expect(out).toMatch(new RegExp(`^${statusColumns}[^\n]*\n$`)),
    ],
    [
      'unnamed.csv',
      'a,b\r\n',
      'out.csv',
      (out: string) => expect(out).toMatch(new RegExp(`^a,b,${statusColumns}[^\n]*\n$`)),
    ],
  ])('%s %j -o %s: exit 0, an empty output, nothing sent', async (name, text, output, check) => {
    const s = await sandbox();
    const r = await enrich(s, name, text, ['-o', `@/${output}`]);
    expect(r.stderr).not.toMatch(/MAPPING_INVALID|columns are/);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/rows: 0 /);
    check(await readFile(join(r.dir, output), 'utf8'));
    expect(s.admin.stats()).toMatchObject({ jobs_submitted: 0, credits_charged: 0 });
  });

  it('--dry-run --json plans nothing', async () => {
    const s = await sandbox();
    const r = await enrich(s, 'empty.json', '[]', ['--dry-run', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ mapping: {}, rows: 0, max_credits: 0 });
  });

  it('--map and --id-column cannot be checked against JSON without records: exit 0', async () => {
    const s = await sandbox();
    const r = await enrich(s, 'empty.json', '[]', [
      '--map',
      'business_email=Email',
      '--id-column',
      'ID',
      '-o',
      '@/out.json',
    ]);
    expect(r.code).toBe(0);
  });

  it('a --map column a header-only CSV lacks is still exit 2 (it is renamed)', async () => {
    const s = await sandbox();
    const r = await enrich(s, 'renamed.csv', 'Work Email,Name\r\n', [
      '--map',
      'business_email=Email',
      '-o',
      '@/out.csv',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /business_email is mapped to column "Email", which the input does not have/,
    );
  });
});
